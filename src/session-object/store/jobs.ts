// The jobs table (with the full-output reference joined beside each job): loading the jobs a rule
// names, the overdue ones, counts and pages, and the writes that change a job.

import type { Overdue } from "../../domain/decision";
import { dict } from "../../domain/records";
import type { FullOutput, Job, JobResult } from "../../domain/state";
import { fitting, parseOrNull, type Writers } from "./columns";
import { storeReference } from "./outputs";

type JobRow = {
  handle: string;
  seq: number;
  command: string;
  lifetime: string;
  reserved_at: number;
  callback_token: string;
  status: string;
  exit_code: number | null;
  output: string | null;
  output_truncated: number | null;
  output_bytes_total: number | null;
  /** Migration 16: 0 when the runner sent no total for a cut output. */
  output_bytes_total_known: number;
  ended_by: string | null;
  completed_at: number | null;
  generation: number | null;
  heartbeat_timeout_ms: number | null;
  last_heartbeat_at: number | null;
  deadline_at: number | null;
  grace_for: number | null;
  cancel_requested: number;
  progress_at: number | null;
  progress_bytes: number | null;
  progress_tail: string | null;
  /** From the outputs table (migration 8); null when the job has no row there. */
  uploaded_bytes: number | null;
  full_output_bytes: number | null;
  full_output_sha256: string | null;
  /** JSON of FullOutput["parts"]; null in a summary row. */
  full_output_parts: string | null;
};

const JOB_COLUMNS = `seq, handle, command, lifetime, reserved_at, callback_token, status, exit_code,
  output_truncated, output_bytes_total, output_bytes_total_known, ended_by, completed_at, generation, heartbeat_timeout_ms,
  last_heartbeat_at, deadline_at, grace_for, cancel_requested, progress_at, progress_bytes,
  progress_tail, o.uploaded_bytes, o.bytes AS full_output_bytes, o.sha256 AS full_output_sha256`;
/** The full output's reference sits beside the job (migration 8), joined where a job is read. */
const WITH_REFERENCE = "FROM jobs LEFT JOIN outputs o ON o.job_seq = jobs.seq";
/** A job row without its output (the last column, read only when selected): for summaries. */
const JOB_SUMMARY = `SELECT ${JOB_COLUMNS}, NULL AS output, NULL AS full_output_parts
  ${WITH_REFERENCE}`;
/** Every job with its output: for the whole-session snapshot of tests. */
export const JOB_WITH_OUTPUT = `SELECT ${JOB_COLUMNS}, output, o.parts AS full_output_parts
  ${WITH_REFERENCE}`;
/**
 * One job by handle, its output (and its full output's parts) read only when the first binding
 * is 1: one prepared statement serves the rules that read outputs and those that must not (SQLite
 * reads a column only in the CASE branch taken), instead of one statement each kept prepared for
 * the object's life.
 */
const JOB_BY_HANDLE = `SELECT ${JOB_COLUMNS}, CASE WHEN ?1 = 1 THEN output END AS output,
  CASE WHEN ?1 = 1 THEN o.parts END AS full_output_parts ${WITH_REFERENCE} WHERE handle = ?2`;

export function jobFromRow(row: JobRow): Job {
  const fields = {
    handle: row.handle,
    seq: row.seq,
    command: row.command,
    lifetime: row.lifetime,
    reservedAt: row.reserved_at,
    callbackToken: row.callback_token,
    heartbeatTimeoutMs: row.heartbeat_timeout_ms,
    lastHeartbeatAt: row.last_heartbeat_at,
    deadlineAt: row.deadline_at,
    graceFor: row.grace_for,
    cancelRequested: row.cancel_requested === 1,
    progress:
      row.progress_at === null
        ? null
        : {
            outputTail: row.progress_tail ?? "",
            outputBytesTotal: row.progress_bytes,
            at: row.progress_at,
          },
    // Only when there is one: a job without uploads keeps the shape it always had.
    ...(row.uploaded_bytes !== null && row.uploaded_bytes > 0
      ? { uploadedBytes: row.uploaded_bytes }
      : {}),
  };
  // The table's CHECK holds a finished row to a completion time; a running row has no result.
  if (row.status === "running" || row.completed_at === null) return { ...fields, result: null };
  return {
    ...fields,
    completedAt: row.completed_at,
    generation: row.generation,
    result: {
      status: row.status as JobResult["status"],
      exitCode: row.exit_code,
      // Null only in a summary row, which is read without its output.
      output: row.output ?? "",
      outputTruncated: row.output_truncated === 1,
      outputBytesTotal: row.output_bytes_total ?? 0,
      ...(row.output_bytes_total_known === 0 ? { outputBytesTotalKnown: false } : {}),
      endedBy: row.ended_by as JobResult["endedBy"],
      ...(row.full_output_bytes === null || row.full_output_sha256 === null
        ? {}
        : {
            fullOutput: {
              bytes: row.full_output_bytes,
              sha256: row.full_output_sha256,
              // A summary reads no parts: its view shows bytes and sha256 only.
              parts: parseOrNull<FullOutput["parts"]>(row.full_output_parts) ?? [],
            },
          }),
    },
  };
}

/** Every job of the session (tests only: a request never loads them all). */
export const allJobs = (sql: SqlStorage): Iterable<JobRow> => sql.exec<JobRow>(JOB_WITH_OUTPUT);

/**
 * The running jobs whose deadline passed, and the earliest deadline after now: one walk of the
 * running jobs' partial index (no index holds the deadline, which every heartbeat moves).
 */
export function loadOverdue(sql: SqlStorage, now: number, max: number): Overdue {
  const due = sql
    .exec<{ handle: string }>(
      `SELECT handle FROM jobs INDEXED BY jobs_running
       WHERE completed_at IS NULL AND deadline_at <= ? ORDER BY deadline_at LIMIT ?`,
      now,
      max + 1,
    )
    .toArray()
    .map((row) => row.handle);
  const next = sql
    .exec<{ at: number | null }>(
      `SELECT MIN(deadline_at) AS at FROM jobs INDEXED BY jobs_running
       WHERE completed_at IS NULL AND deadline_at > ?`,
      now,
    )
    .one().at;
  return { handles: due.slice(0, max), more: due.length > max, nextDeadline: next };
}

/** The jobs of `handles` (at most a wait's 64), with outputs only when the rule reads them. */
export function loadJobs(
  sql: SqlStorage,
  handles: readonly string[],
  withOutput: boolean,
): Record<string, Job> {
  const jobs = dict<Job>();
  for (const handle of new Set(handles)) {
    const row = sql.exec<JobRow>(JOB_BY_HANDLE, withOutput ? 1 : 0, handle).toArray()[0];
    if (row !== undefined) jobs[handle] = jobFromRow(row);
  }
  return jobs;
}

/**
 * Running jobs and, when the binding is 1, finished ones, each counted over its partial index. One
 * statement serves the view and the quota: SQLite runs the second count only in the CASE branch
 * taken, so the quota reads no finished job, and the object keeps one statement prepared, not two.
 */
const COUNT_JOBS = `SELECT (SELECT COUNT(*) FROM jobs WHERE completed_at IS NULL) AS running,
  CASE WHEN ?1 = 1 THEN (SELECT COUNT(*) FROM jobs WHERE completed_at IS NOT NULL) END AS done`;

export function countJobs(sql: SqlStorage): { running: number; done: number } {
  const row = sql.exec<{ running: number; done: number }>(COUNT_JOBS, 1).one();
  return { running: row.running, done: row.done };
}

/** Jobs without a result (the quota's count). */
export const countRunning = (sql: SqlStorage): number =>
  sql.exec<{ running: number }>(COUNT_JOBS, 0).one().running;

export function listJobs(
  sql: SqlStorage,
  query: { status: "running" | "done" | null; after: number; limit: number; maxBytes: number },
): { jobs: Job[]; next: number | null } {
  const filter =
    query.status === "running"
      ? "AND completed_at IS NULL"
      : query.status === "done"
        ? "AND completed_at IS NOT NULL"
        : "";
  // A summary's size is its strings as JSON (a command of control characters escapes six-fold)
  // plus a bound for the fixed fields.
  const sizes = sql.exec<{ seq: number; bytes: number }>(
    `SELECT seq, 520 + octet_length(json_quote(command)) + 2 * octet_length(handle)
       + octet_length(lifetime) AS bytes
     FROM jobs WHERE seq > ? ${filter} ORDER BY seq LIMIT ?`,
    query.after,
    query.limit + 1,
  );
  const page = fitting(sizes, query.maxBytes).slice(0, query.limit);
  const last = page.at(-1);
  if (last === undefined) return { jobs: [], next: null };
  const jobs = sql
    .exec<JobRow>(
      `${JOB_SUMMARY} WHERE seq > ? AND seq <= ? ${filter} ORDER BY seq`,
      query.after,
      last.seq,
    )
    .toArray()
    .map(jobFromRow);
  const more =
    sql.exec(`SELECT 1 FROM jobs WHERE seq > ? ${filter} LIMIT 1`, last.seq).toArray().length > 0;
  return { jobs, next: more ? last.seq : null };
}

export const JOB_WRITERS: Writers<
  "insert_job" | "replace_job_token" | "complete_job" | "update_liveness"
> = {
  insert_job: (sql, { job }) => {
    sql.exec(
      `INSERT INTO jobs (seq, handle, command, lifetime, reserved_at, callback_token, status,
         heartbeat_timeout_ms, deadline_at)
       VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)`,
      job.seq,
      job.handle,
      job.command,
      job.lifetime,
      job.reservedAt,
      job.callbackToken,
      job.heartbeatTimeoutMs,
      job.deadlineAt,
    );
  },
  replace_job_token: (sql, write) => {
    sql.exec(
      "UPDATE jobs SET callback_token = ? WHERE handle = ?",
      write.callbackToken,
      write.handle,
    );
  },
  complete_job: (sql, { job }) => {
    // The first result wins in storage too: a row that has one is never rewritten.
    sql.exec(
      `UPDATE jobs SET status = ?, exit_code = ?, output_truncated = ?, output_bytes_total = ?,
         output_bytes_total_known = ?, ended_by = ?, completed_at = ?, generation = ?, output = ?, deadline_at = NULL,
         progress_at = NULL, progress_bytes = NULL, progress_tail = NULL
       WHERE handle = ? AND status = 'running'`,
      job.result.status,
      job.result.exitCode,
      job.result.outputTruncated ? 1 : 0,
      job.result.outputBytesTotal,
      job.result.outputBytesTotalKnown === false ? 0 : 1,
      job.result.endedBy,
      job.completedAt,
      job.generation,
      job.result.output,
      job.handle,
    );
    const full = job.result.fullOutput;
    if (full !== undefined) storeReference(sql, job.seq, full);
  },
  update_liveness: (sql, { job }) => {
    // One row: a running job's liveness columns, never its result (the guard keeps a finished
    // row as the first result left it).
    sql.exec(
      `UPDATE jobs SET last_heartbeat_at = ?, deadline_at = ?, grace_for = ?, cancel_requested = ?,
         progress_at = ?, progress_bytes = ?, progress_tail = ?
       WHERE handle = ? AND status = 'running'`,
      job.lastHeartbeatAt,
      job.deadlineAt,
      job.graceFor,
      job.cancelRequested ? 1 : 0,
      job.progress?.at ?? null,
      job.progress?.outputBytesTotal ?? null,
      job.progress?.outputTail ?? null,
      job.handle,
    );
  },
};
