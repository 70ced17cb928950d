// The jobs exec_command started: the runner's own id of each, which runner (its `seq`) started it,
// and whether that runner has since given the id to a newer command. A row whose job was purged is
// dropped at the next MCP reservation.

/** One MCP-started job (persisted: `mcp_jobs`). */
export interface McpJobRow {
  readonly handle: string;
  /** The runner's id of the command: the handle, unless the session already held that id. */
  readonly runnerId: string;
  /** The `seq` of the runner that started it. */
  readonly runnerSeq: number;
  /** The same runner gave its id to a newer command: it names another process now. */
  readonly superseded: boolean;
}

/**
 * Records a job the runner `runnerSeq` started as `runnerId`; any job that runner started under
 * the same id before is marked superseded in the same step.
 */
export function insertMcpJob(sql: SqlStorage, row: Omit<McpJobRow, "superseded">): void {
  sql.exec("DELETE FROM mcp_jobs WHERE handle NOT IN (SELECT handle FROM jobs)");
  sql.exec(
    "UPDATE mcp_jobs SET superseded = 1 WHERE runner_id = ? AND runner_seq = ?",
    row.runnerId,
    row.runnerSeq,
  );
  sql.exec(
    "INSERT OR REPLACE INTO mcp_jobs (handle, runner_id, runner_seq, superseded) VALUES (?, ?, ?, 0)",
    row.handle,
    row.runnerId,
    row.runnerSeq,
  );
}

export function readMcpJob(sql: SqlStorage, handle: string): McpJobRow | null {
  const row = sql
    .exec<{ handle: string; runner_id: string; runner_seq: number; superseded: number }>(
      "SELECT handle, runner_id, runner_seq, superseded FROM mcp_jobs WHERE handle = ?",
      handle,
    )
    .toArray()[0];
  return row === undefined
    ? null
    : {
        handle: row.handle,
        runnerId: row.runner_id,
        runnerSeq: row.runner_seq,
        superseded: row.superseded === 1,
      };
}

/** Forgets the job's MCP row (its reservation was dropped). */
export function deleteMcpJob(sql: SqlStorage, handle: string): void {
  sql.exec("DELETE FROM mcp_jobs WHERE handle = ?", handle);
}
