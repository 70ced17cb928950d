// The session's MCP task rows: insert, read, page and mark cancelled. What a task's status is
// follows from its job, read beside it; that rule is src/mcp's.

/** One task row (persisted: `mcp_tasks`). `result` is the JSON text of a CallToolResult. */
export interface TaskRow {
  readonly taskId: string;
  readonly seq: number;
  /** The job the task follows; null when the command ended within its yield (`result` holds it). */
  readonly handle: string | null;
  /** The stored answer; null also in a page of the list, which leaves it out. */
  readonly result: string | null;
  readonly createdAt: number;
  readonly cancelledAt: number | null;
}

interface Row {
  task_id: string;
  seq: number;
  handle: string | null;
  result: string | null;
  created_at: number;
  cancelled_at: number | null;
  [column: string]: SqlStorageValue;
}

const fromRow = (row: Row): TaskRow => ({
  taskId: row.task_id,
  seq: row.seq,
  handle: row.handle,
  result: row.result,
  createdAt: row.created_at,
  cancelledAt: row.cancelled_at,
});

const COLUMNS = "task_id, seq, handle, result, created_at, cancelled_at";

/**
 * Inserts a task after the newest. Tasks that are gone go first: one whose job was purged, and one
 * holding its own answer created before `keepSince`. A task lasts as long as its job, however long
 * that job runs.
 */
export function insertTask(
  sql: SqlStorage,
  task: { taskId: string; handle: string | null; result: string | null; createdAt: number },
  keepSince: number,
): TaskRow {
  sql.exec(
    `DELETE FROM mcp_tasks WHERE (handle IS NULL AND created_at < ?)
       OR (handle IS NOT NULL AND handle NOT IN (SELECT handle FROM jobs))`,
    keepSince,
  );
  const seq = sql
    .exec<{ n: number }>("SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM mcp_tasks")
    .one().n;
  sql.exec(
    `INSERT INTO mcp_tasks (${COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL)`,
    task.taskId,
    seq,
    task.handle,
    task.result,
    task.createdAt,
  );
  return { ...task, seq, cancelledAt: null };
}

export function readTask(sql: SqlStorage, taskId: string): TaskRow | null {
  const row = sql
    .exec<Row>(`SELECT ${COLUMNS} FROM mcp_tasks WHERE task_id = ?`, taskId)
    .toArray()[0];
  return row === undefined ? null : fromRow(row);
}

/**
 * The tasks after `afterSeq`, oldest first, at most `limit`, without their stored answers
 * (`result` null): a list shows no results, and a page of them could pass the RPC's 32 MiB.
 */
export function taskPage(sql: SqlStorage, afterSeq: number, limit: number): TaskRow[] {
  return sql
    .exec<Row>(
      `SELECT task_id, seq, handle, NULL AS result, created_at, cancelled_at
         FROM mcp_tasks WHERE seq > ? ORDER BY seq LIMIT ?`,
      afterSeq,
      limit,
    )
    .toArray()
    .map(fromRow);
}

/** Marks the task cancelled (the first cancel's time stays). */
export function markCancelled(sql: SqlStorage, taskId: string, at: number): void {
  sql.exec(
    "UPDATE mcp_tasks SET cancelled_at = COALESCE(cancelled_at, ?) WHERE task_id = ?",
    at,
    taskId,
  );
}
