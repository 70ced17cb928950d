// The tables a session object's database holds, read in one statement. Whether a session was ever
// created here, what a new database still holds and whether full outputs wait to be swept are all
// answered from this one list, which its callers read (the migrations, the output sweep).

/**
 * The names of the database's tables. One string answers every question about which tables exist:
 * workerd keeps each distinct string an object runs prepared for the object's life, so a query
 * per table asked about would keep one statement each.
 */
export const tableNames = (sql: SqlStorage): ReadonlySet<string> =>
  new Set(
    sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .toArray()
      .map((row) => row.name),
  );
