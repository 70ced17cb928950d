// Writing today's rows into an older schema, for upgrade tests: columns a later migration added
// did not exist then, so only the columns the old table has are written.

type Row = Record<string, SqlStorageValue>;

export function insertOldRow(sql: SqlStorage, table: string, full: Row): void {
  const columns = new Set(
    sql
      .exec<{ name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
      .toArray()
      .map((column) => column.name),
  );
  const row = Object.entries(full).filter(([key]) => columns.has(key));
  sql.exec(
    `INSERT INTO ${table} (${row.map(([key]) => key).join(", ")}) VALUES (${row.map(() => "?").join(", ")})`,
    ...row.map(([, value]) => value),
  );
}
