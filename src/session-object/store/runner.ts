// The session's runner row: its base URL, bearer token and sequence number. Which URL may be named
// is the HTTP layer's check; the token leaves this object only for the calls the service makes to
// the runner.

/** The runner a session names (persisted: the `runner` table's one row). */
export interface SessionRunner {
  readonly url: string;
  readonly token: string;
}

/** The runner as stored: `seq` tells it apart from every runner named before it. */
export interface StoredRunner extends SessionRunner {
  readonly seq: number;
}

export function readRunner(sql: SqlStorage): StoredRunner | null {
  const row = sql
    .exec<{ url: string | null; token: string | null; seq: number }>(
      "SELECT url, token, seq FROM runner",
    )
    .toArray()[0];
  return row === undefined || row.url === null || row.token === null
    ? null
    : { url: row.url, token: row.token, seq: row.seq };
}

/**
 * Names the runner, or removes it (null). The row stays when the runner is removed, so `seq` never
 * starts again: it grows for every runner named, except when the runner named now is named again with the
 * same token (a retried PUT), whose jobs stay its own.
 */
export function writeRunner(sql: SqlStorage, runner: SessionRunner | null): void {
  if (runner === null) {
    sql.exec("UPDATE runner SET url = NULL, token = NULL");
    return;
  }
  sql.exec(
    `INSERT INTO runner (only, url, token, seq) VALUES (1, ?, ?, 1)
       ON CONFLICT (only) DO UPDATE SET url = excluded.url, token = excluded.token,
         seq = CASE WHEN runner.url IS excluded.url AND runner.token IS excluded.token
                    THEN runner.seq ELSE runner.seq + 1 END`,
    runner.url,
    runner.token,
  );
}
