// Counts the SQLite rows a session object reads and writes (what Cloudflare bills), for its stats.
// Which statements run is left to the store; this only wraps `exec`.

export interface SqlMeter {
  rowsRead: number;
  rowsWritten: number;
  /**
   * The distinct strings run: workerd keeps each prepared for the object's life, so this is the
   * count of statements holding SQLite heap (a reference per string, which the runtime interns).
   */
  statements: Set<string>;
}

/** An SqlStorage whose cursors are tallied into `meter` once consumed (call `settle` after use). */
export function meteredSql(sql: SqlStorage, meter: SqlMeter): { sql: SqlStorage; settle(): void } {
  const open: { cursor: SqlStorageCursor<Record<string, SqlStorageValue>>; read: boolean }[] = [];
  const metered = Object.create(sql) as SqlStorage;
  Object.defineProperty(metered, "exec", {
    value: (query: string, ...bindings: unknown[]) => {
      meter.statements.add(query);
      const cursor = sql.exec(query, ...bindings);
      open.push({ cursor, read: /^\s*SELECT\b/i.test(query) });
      return cursor;
    },
  });
  Object.defineProperty(metered, "databaseSize", { get: () => sql.databaseSize });
  return {
    sql: metered,
    settle() {
      for (const { cursor, read } of open.splice(0)) {
        // A write's counts are final only once its cursor has run to the end; a read that stopped
        // early (a page) must not be drained, or the page bound would be for nothing.
        if (!read) cursor.toArray();
        meter.rowsRead += cursor.rowsRead;
        meter.rowsWritten += cursor.rowsWritten;
      }
    },
  };
}
