// The session's runner row: its base URL and bearer token. Which URL may be named is the HTTP
// layer's check; the token leaves this object only for the calls the service makes to the runner.

/** The runner a session names (persisted: the `runner` table's one row). */
export interface SessionRunner {
  readonly url: string;
  readonly token: string;
}

export function readRunner(sql: SqlStorage): SessionRunner | null {
  const row = sql
    .exec<{ url: string; token: string }>("SELECT url, token FROM runner")
    .toArray()[0];
  return row === undefined ? null : { url: row.url, token: row.token };
}

/** Replaces the runner, or removes it (null). */
export function writeRunner(sql: SqlStorage, runner: SessionRunner | null): void {
  if (runner === null) {
    sql.exec("DELETE FROM runner");
    return;
  }
  sql.exec(
    "INSERT INTO runner (only, url, token) VALUES (1, ?, ?) ON CONFLICT (only) DO UPDATE SET url = excluded.url, token = excluded.token",
    runner.url,
    runner.token,
  );
}
