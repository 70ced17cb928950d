// The jobs exec_command started: the runner's own id of each and which runner (its `set_at`)
// started it. A row whose job was purged is dropped at the next MCP reservation.

/** One MCP-started job (persisted: `mcp_jobs`). */
export interface McpJobRow {
  readonly handle: string;
  /** The runner's id of the command: the handle, unless the session already held that id. */
  readonly runnerId: string;
  /** The `set_at` of the runner that started it. */
  readonly runnerSetAt: number;
}

export function insertMcpJob(sql: SqlStorage, row: McpJobRow): void {
  sql.exec("DELETE FROM mcp_jobs WHERE handle NOT IN (SELECT handle FROM jobs)");
  sql.exec(
    "INSERT OR REPLACE INTO mcp_jobs (handle, runner_id, runner_set_at) VALUES (?, ?, ?)",
    row.handle,
    row.runnerId,
    row.runnerSetAt,
  );
}

export function readMcpJob(sql: SqlStorage, handle: string): McpJobRow | null {
  const row = sql
    .exec<{ handle: string; runner_id: string; runner_set_at: number }>(
      "SELECT handle, runner_id, runner_set_at FROM mcp_jobs WHERE handle = ?",
      handle,
    )
    .toArray()[0];
  return row === undefined
    ? null
    : { handle: row.handle, runnerId: row.runner_id, runnerSetAt: row.runner_set_at };
}
