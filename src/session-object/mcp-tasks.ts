// MCP tasks as plain functions over the loop: a task row beside the job it follows, read back with
// that job. A task lives as long as its job is kept, however long it runs; one holding its own
// answer, JOB_RETENTION_MS. Its status is src/mcp's.

import { fail, type Result } from "../domain/errors";
import type { JobView } from "../domain/view";
import { cancel, getJob } from "./exec-jobs";
import { newId, type SessionLoop } from "./loop";
import { askable } from "./mcp-jobs";
import { insertTask, markCancelled, readTask, type TaskRow, taskPage } from "./store/mcp-tasks";

/** A task with its job as it is now (null when the task holds its own answer). */
export interface TaskRecord extends TaskRow {
  readonly job: JobView | null;
  /** How long a task is kept: the job retention. */
  readonly ttlMs: number;
  /** The runner's id of the job when the current runner started it (null: it may not be asked). */
  readonly runnerId: string | null;
}

const UNKNOWN = "no such task in this session";

export function createTask(
  loop: SessionLoop,
  cmd: { handle: string | null; result: string | null },
): Result<TaskRecord> {
  if (loop.core === null) return fail("not_found", "no such session");
  if ((cmd.handle === null) === (cmd.result === null)) {
    return fail("invalid_request", "a task follows a job or holds an answer, exactly one");
  }
  const now = Date.now();
  const ttlMs = loop.config.jobRetentionMs;
  let row: TaskRow | null = null;
  loop.store.transaction((sql) => {
    row = insertTask(sql, { taskId: newId("task"), ...cmd, createdAt: now }, now - ttlMs);
  });
  if (row === null) throw new Error("the task insert committed no row");
  return recordOf(loop, row);
}

/** The task and its job; a task whose job was purged is gone with it. */
function recordOf(loop: SessionLoop, row: TaskRow): Result<TaskRecord> {
  const ttlMs = loop.config.jobRetentionMs;
  if (row.handle === null) return { ok: true, value: { ...row, job: null, ttlMs, runnerId: null } };
  const job = getJob(loop, { handle: row.handle });
  return job.ok
    ? {
        ok: true,
        value: { ...row, job: job.value, ttlMs, runnerId: askable(loop, job.value).runnerId },
      }
    : fail("not_found", UNKNOWN);
}

export function taskRecord(loop: SessionLoop, cmd: { taskId: string }): Result<TaskRecord> {
  if (loop.core === null) return fail("not_found", "no such session");
  const row = loop.store.read((sql) => readTask(sql, cmd.taskId));
  return row === null ? fail("not_found", UNKNOWN) : recordOf(loop, row);
}

/** A page of the session's tasks, oldest first; tasks whose jobs were purged are left out. */
export function taskRecords(
  loop: SessionLoop,
  cmd: { afterSeq: number; limit: number },
): Result<{ records: TaskRecord[]; nextSeq: number | null }> {
  if (loop.core === null) return fail("not_found", "no such session");
  const rows = loop.store.read((sql) => taskPage(sql, cmd.afterSeq, cmd.limit + 1));
  const page = rows.slice(0, cmd.limit);
  const records: TaskRecord[] = [];
  for (const row of page) {
    const record = recordOf(loop, row);
    // The list carries no outputs nor stored answers (the page left them out): a task's result
    // is tasks/result's.
    if (record.ok) records.push({ ...record.value, job: withoutOutput(record.value.job) });
  }
  const last = page.at(-1);
  return {
    ok: true,
    value: { records, nextSeq: rows.length > cmd.limit && last !== undefined ? last.seq : null },
  };
}

const withoutOutput = (job: JobView | null): JobView | null =>
  job === null ? null : { ...job, output: "" };

/**
 * The client's cancel: the task is cancelled at once, and its running job asked to stop by the
 * cancel of the exec jobs (the runner ends it and reports it; nothing is invented here).
 */
export function cancelTask(loop: SessionLoop, cmd: { taskId: string }): Result<TaskRecord> {
  const found = taskRecord(loop, cmd);
  if (!found.ok) return found;
  loop.store.transaction((sql) => markCancelled(sql, cmd.taskId, Date.now()));
  const { handle, job } = found.value;
  if (handle !== null && job?.status === "running") {
    const asked = cancel(loop, { handle });
    if (!asked.ok) return asked;
  }
  return taskRecord(loop, cmd);
}
