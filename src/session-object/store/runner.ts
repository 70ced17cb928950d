// The session's runner row: its base URL, bearer token and when it was set. Which URL may be named
// is the HTTP layer's check; the token leaves this object only for the calls the service makes to
// the runner.

/** The runner a session names (persisted: the `runner` table's one row). */
export interface SessionRunner {
  readonly url: string;
  readonly token: string;
}

/** The runner as stored: `setAt` tells it apart from the runners it replaced. */
export interface StoredRunner extends SessionRunner {
  readonly setAt: number;
}

export function readRunner(sql: SqlStorage): StoredRunner | null {
  const row = sql
    .exec<{ url: string; token: string; set_at: number }>("SELECT url, token, set_at FROM runner")
    .toArray()[0];
  return row === undefined ? null : { url: row.url, token: row.token, setAt: row.set_at };
}

/**
 * Replaces the runner, or removes it (null). `set_at` grows with every replacement, even two in
 * one millisecond: a job started by the runner before is never taken for the new one's.
 */
export function writeRunner(sql: SqlStorage, runner: SessionRunner | null, now: number): void {
  if (runner === null) {
    sql.exec("DELETE FROM runner");
    return;
  }
  sql.exec(
    `INSERT INTO runner (only, url, token, set_at) VALUES (1, ?, ?, ?)
       ON CONFLICT (only) DO UPDATE SET url = excluded.url, token = excluded.token,
         set_at = MAX(excluded.set_at, runner.set_at + 1)`,
    runner.url,
    runner.token,
    now,
  );
}
