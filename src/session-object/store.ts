// SQL statements and row ⇄ domain mappers for one session: the core, the rows a rule needs, and
// the writes a decision returns. Transactions and the in-memory core are left to the kernel.

import { assertNever } from "../domain/assert-never";
import type { Core, Needs, Overdue, Write } from "../domain/decision";
import { dict, fence } from "../domain/records";
import type {
  FullOutput,
  InboxItem,
  Job,
  JobResult,
  Message,
  Resume,
  Run,
  Session,
  Wait,
} from "../domain/state";
import { trimAudit } from "./audit-trail";

type SessionRow = {
  tenant: string;
  id: string;
  lifetime: string;
  created_at: number;
  resume_url: string | null;
  resume_binding: string | null;
  metadata: string;
  run: string | null;
  wait: string | null;
  resume: string | null;
  notify_seq: number;
  generation: number;
  job_seq: number;
  liveness_due_at: number | null;
  message_bytes: number;
};

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

type InboxRow = {
  id: string;
  state: string;
  lease_expires_at: number | null;
  acked_at: number | null;
  envelope: string;
};

type MessageRow = {
  idx: number;
  role: string;
  content: string;
  metadata: string;
  created_at: number;
};

// JSON columns hold the domain shapes Run, Wait, Resume as they are; new fields must stay optional.
const parseOrNull = <T>(text: string | null): T | null =>
  text === null ? null : (JSON.parse(text) as T);

const JOB_COLUMNS = `seq, handle, command, lifetime, reserved_at, callback_token, status, exit_code,
  output_truncated, output_bytes_total, ended_by, completed_at, generation, heartbeat_timeout_ms,
  last_heartbeat_at, deadline_at, grace_for, cancel_requested, progress_at, progress_bytes,
  progress_tail, o.uploaded_bytes, o.bytes AS full_output_bytes, o.sha256 AS full_output_sha256`;
/** The full output's reference sits beside the job (migration 8), joined where a job is read. */
const WITH_REFERENCE = "FROM jobs LEFT JOIN outputs o ON o.job_seq = jobs.seq";
/** A job row without its output (the last column, read only when selected): for summaries. */
const JOB_SUMMARY = `SELECT ${JOB_COLUMNS}, NULL AS output, NULL AS full_output_parts
  ${WITH_REFERENCE}`;
const JOB_WITH_OUTPUT = `SELECT ${JOB_COLUMNS}, output, o.parts AS full_output_parts
  ${WITH_REFERENCE}`;
/**
 * One job by handle, its output (and its full output's parts) read only when the first binding
 * is 1: one prepared statement serves the rules that read outputs and those that must not (SQLite
 * reads a column only in the CASE branch taken), instead of one statement each kept prepared for
 * the object's life.
 */
const JOB_BY_HANDLE = `SELECT ${JOB_COLUMNS}, CASE WHEN ?1 = 1 THEN output END AS output,
  CASE WHEN ?1 = 1 THEN o.parts END AS full_output_parts ${WITH_REFERENCE} WHERE handle = ?2`;

function jobFromRow(row: JobRow): Job {
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

const messageFromRow = (row: MessageRow): Message => ({
  index: row.idx,
  role: row.role as Message["role"],
  content: JSON.parse(row.content),
  metadata: JSON.parse(row.metadata),
  createdAt: row.created_at,
});

const itemFromRow = (row: InboxRow): InboxItem => ({
  envelope: JSON.parse(row.envelope),
  state: row.state as InboxItem["state"],
  leaseExpiresAt: row.lease_expires_at,
  ackedAt: row.acked_at,
});

/** The core the object keeps in memory: no message, job or inbox row; counters read once. */
export function loadCore(sql: SqlStorage): Core | null {
  const row = sql.exec<SessionRow>("SELECT * FROM session WHERE singleton = 1").toArray()[0];
  if (row === undefined) return null;
  const counts = sql
    .exec<{ messages: number; unacked: number }>(
      `SELECT (SELECT COALESCE(MAX(idx) + 1, 0) FROM messages) AS messages,
              (SELECT COUNT(*) FROM inbox WHERE acked_at IS NULL) AS unacked`,
    )
    .one();
  return {
    tenant: row.tenant,
    id: row.id,
    lifetime: row.lifetime,
    createdAt: row.created_at,
    resumeUrl: row.resume_url,
    resumeBinding: row.resume_binding,
    metadata: JSON.parse(row.metadata),
    messageCount: counts.messages,
    messageBytes: row.message_bytes,
    jobSeq: row.job_seq,
    unacked: counts.unacked,
    run: parseOrNull<Run>(row.run),
    wait: parseOrNull<Wait>(row.wait),
    resume: parseOrNull<Resume>(row.resume),
    notifySeq: row.notify_seq,
    generation: row.generation,
    livenessDueAt: row.liveness_due_at,
  };
}

/**
 * The core with exactly the rows `needs` names, each record fenced to the keys asked for: a rule
 * that reads another row throws (records.ts) instead of taking a missing row for an absent one.
 */
export function loadRows(
  sql: SqlStorage,
  core: Core,
  needs: Needs,
  now: number,
): { session: Session; overdue: Overdue | null } {
  const overdue = needs.overdue === undefined ? null : loadOverdue(sql, now, needs.overdue.max);
  const handles = [...(needs.jobs?.handles ?? []), ...(overdue?.handles ?? [])];
  const tombstones = needs.tombstones ?? [];
  const jobs =
    needs.jobs === undefined && overdue === null
      ? dict<Job>()
      : loadJobs(sql, handles, needs.jobs?.output ?? false);
  const purged = tombstones.length === 0 ? dict<number>() : loadTombstones(sql, tombstones);
  const runIds = needs.finishedRuns ?? [];
  const finishedRuns = runIds.length === 0 ? dict<number>() : loadFinishedRuns(sql, runIds);
  const inbox =
    needs.claimable !== undefined
      ? loadClaimable(sql, now, needs.claimable.max, needs.claimable.maxBytes)
      : needs.items !== undefined
        ? loadForAck(sql, needs.items)
        : dict<InboxItem>();
  const inboxKeys = needs.items ?? Object.keys(inbox);
  const session = {
    ...core,
    messages: [],
    jobs: fence(jobs, handles),
    purged: fence(purged, tombstones),
    inbox: fence(inbox, inboxKeys),
    finishedRuns: fence(finishedRuns, runIds),
  };
  return { session, overdue };
}

/**
 * The running jobs whose deadline passed, and the earliest deadline after now: one walk of the
 * running jobs' partial index (no index holds the deadline, which every heartbeat moves).
 */
function loadOverdue(sql: SqlStorage, now: number, max: number): Overdue {
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
function loadJobs(
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

function loadTombstones(sql: SqlStorage, handles: readonly string[]): Record<string, number> {
  const purged = dict<number>();
  for (const handle of new Set(handles)) {
    const row = sql
      .exec<{ purged_at: number }>("SELECT purged_at FROM purged WHERE handle = ?", handle)
      .toArray()[0];
    if (row !== undefined) purged[handle] = row.purged_at;
  }
  return purged;
}

/** Which of `runIds` finished in this lifetime: one primary-key lookup each. */
function loadFinishedRuns(sql: SqlStorage, runIds: readonly string[]): Record<string, number> {
  const finished = dict<number>();
  for (const runId of new Set(runIds)) {
    const row = sql
      .exec<{ finished_at: number }>(
        "SELECT finished_at FROM finished_runs WHERE run_id = ?",
        runId,
      )
      .toArray()[0];
    if (row !== undefined) finished[runId] = row.finished_at;
  }
  return finished;
}

/**
 * Unacked items are the NULL entries of `inbox_by_acked_at` (migration 11), in generation order: a
 * claimable query walks those (at most the backlog limit), never the acked items kept for their
 * retention. `acked_at` is set exactly when an item is acked: the ack is its only writer, every
 * version of it set the state with it, and a claim never touches it; so the counts read the
 * index alone.
 */
const CLAIMABLE =
  "acked_at IS NULL AND (state = 'pending' OR (state = 'claimed' AND lease_expires_at <= ?))";

/**
 * The first claimable items by generation, at most `limit` and, past the first, only while their
 * envelopes fit in `maxBytes`: a claim never loads envelopes it cannot send. Sizes are read in SQL
 * first, so no envelope becomes a string before it is chosen.
 */
function loadClaimable(
  sql: SqlStorage,
  now: number,
  limit: number,
  maxBytes: number,
): Record<string, InboxItem> {
  const sizes = sql.exec<{ generation: number; bytes: number }>(
    `SELECT generation, octet_length(envelope) AS bytes FROM inbox WHERE ${CLAIMABLE}
     ORDER BY generation LIMIT ?`,
    now,
    limit,
  );
  const chosen = fitting(sizes, maxBytes).map((row) => row.generation);
  const items = dict<InboxItem>();
  for (const generation of chosen) {
    const row = sql
      .exec<InboxRow>(
        "SELECT id, state, lease_expires_at, acked_at, envelope FROM inbox WHERE generation = ?",
        generation,
      )
      .one();
    items[row.id] = itemFromRow(row);
  }
  return items;
}

/** The leading rows whose `bytes` add up to at most `maxBytes`, and always the first one. */
function fitting<Row extends { bytes: number }>(rows: Iterable<Row>, maxBytes: number): Row[] {
  const kept: Row[] = [];
  let total = 0;
  for (const row of rows) {
    total += row.bytes;
    if (kept.length > 0 && total > maxBytes) break;
    kept.push(row);
  }
  return kept;
}

/**
 * The items an ack names, without their envelopes: an ack never reads one, and 1,024 of them
 * would be 64 MiB. The stand-in envelope carries id and generation only; no write carries an
 * admitted envelope again (`mark_acked` names ids), so it cannot reach storage.
 */
function loadForAck(sql: SqlStorage, ids: readonly string[]): Record<string, InboxItem> {
  const items = dict<InboxItem>();
  for (const id of new Set(ids)) {
    const row = sql
      .exec<Omit<InboxRow, "envelope"> & { generation: number }>(
        "SELECT id, generation, state, lease_expires_at, acked_at FROM inbox WHERE id = ?",
        id,
      )
      .toArray()[0];
    if (row === undefined) continue;
    items[id] = {
      envelope: { id: row.id, generation: row.generation } as InboxItem["envelope"],
      state: row.state as InboxItem["state"],
      leaseExpiresAt: row.lease_expires_at,
      ackedAt: row.acked_at,
    };
  }
  return items;
}

/** Claimable items at `now` (a lapsed lease counts as pending). */
export const countPending = (sql: SqlStorage, now: number): number =>
  sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM inbox WHERE ${CLAIMABLE}`, now).one().n;

export const countAcked = (sql: SqlStorage): number =>
  sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM inbox WHERE acked_at IS NOT NULL").one().n;

export function countJobs(sql: SqlStorage): { running: number; done: number } {
  const row = sql
    .exec<{ total: number; done: number }>(
      // Both counts come from indexes: the handle index and the partial index of completed jobs.
      `SELECT (SELECT COUNT(*) FROM jobs) AS total,
              (SELECT COUNT(*) FROM jobs WHERE completed_at IS NOT NULL) AS done`,
    )
    .one();
  return { running: row.total - row.done, done: row.done };
}

/** Jobs without a result, counted over the partial index of running jobs (the quota's count). */
export const countRunning = (sql: SqlStorage): number =>
  sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE completed_at IS NULL").one().n;

/**
 * The bytes of full-output parts the session's jobs uploaded (the full-output bytes quota's
 * count): one row per job that uploaded, and a purged job's row goes with it.
 */
export const fullOutputBytesHeld = (sql: SqlStorage): number =>
  sql.exec<{ n: number }>("SELECT COALESCE(SUM(uploaded_bytes), 0) AS n FROM outputs").one().n;

/** The SQL twin of the domain's `oldestRetained`: each MIN reads one index entry. */
export function oldestRetained(sql: SqlStorage): number | null {
  const row = sql
    .exec<{ jobs: number | null; acks: number | null; tombs: number | null }>(
      `SELECT (SELECT MIN(completed_at) FROM jobs WHERE completed_at IS NOT NULL) AS jobs,
              (SELECT MIN(acked_at) FROM inbox WHERE acked_at IS NOT NULL) AS acks,
              (SELECT MIN(purged_at) FROM purged) AS tombs`,
    )
    .one();
  const times = [row.jobs, row.acks, row.tombs].filter((time): time is number => time !== null);
  return times.length === 0 ? null : Math.min(...times);
}

/** Applies a retention horizon to every row, as the domain's purge does to the loaded ones. */
function purgeBefore(sql: SqlStorage, horizon: number, now: number): void {
  sql.exec("DELETE FROM purged WHERE purged_at <= ?", horizon);
  sql.exec(
    `INSERT INTO purged (handle, purged_at) SELECT handle, ? FROM jobs WHERE completed_at <= ?
     ON CONFLICT (handle) DO UPDATE SET purged_at = excluded.purged_at`,
    now,
    horizon,
  );
  // A purged job's parts are swept from R2 by the alarm (output-sweep.ts): the prefix is
  // full-output.ts's jobPrefix, built here from the rows.
  sql.exec(
    `INSERT OR IGNORE INTO output_sweep (prefix)
     SELECT 'outputs/' || s.tenant || '/' || s.id || '/' || j.lifetime || '/' || j.handle || '/'
       || j.seq || '/'
     FROM jobs j JOIN outputs o ON o.job_seq = j.seq, session s WHERE j.completed_at <= ?`,
    horizon,
  );
  sql.exec(
    "DELETE FROM outputs WHERE job_seq IN (SELECT seq FROM jobs WHERE completed_at <= ?)",
    horizon,
  );
  sql.exec("DELETE FROM jobs WHERE completed_at <= ?", horizon);
  sql.exec("DELETE FROM inbox WHERE acked_at <= ?", horizon);
}

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

export function listMessages(
  sql: SqlStorage,
  query: { after: number; before: number | null; limit: number; maxBytes: number },
): { messages: Message[]; nextAfter: number | null } {
  const before = query.before ?? Number.MAX_SAFE_INTEGER;
  // Content and metadata are stored as JSON: their bytes are what the answer carries.
  const sizes = sql.exec<{ idx: number; bytes: number }>(
    `SELECT idx, 96 + octet_length(content) + octet_length(metadata) AS bytes
     FROM messages WHERE idx > ? AND idx < ? ORDER BY idx LIMIT ?`,
    query.after,
    before,
    query.limit,
  );
  const page = fitting(sizes, query.maxBytes);
  const last = page.at(-1);
  if (last === undefined) return { messages: [], nextAfter: null };
  const messages = sql
    .exec<MessageRow>(
      "SELECT * FROM messages WHERE idx > ? AND idx <= ? ORDER BY idx",
      query.after,
      last.idx,
    )
    .toArray()
    .map(messageFromRow);
  const more =
    sql.exec("SELECT 1 FROM messages WHERE idx > ? AND idx < ? LIMIT 1", last.idx, before).toArray()
      .length > 0;
  return { messages, nextAfter: more ? last.idx : null };
}

// ---- writes -------------------------------------------------------------------------------

/**
 * Each column of the session row and the core field it holds. One table serves the write and the
 * change check, so a field is written exactly when a column holds it; the fields left out are
 * counted from other tables on load (`DERIVED_CORE_FIELDS`), and a test holds every other core
 * field to a round trip. JSON columns hold immutable values a decision replaces to change.
 */
const SESSION_COLUMNS = {
  tenant: (core) => core.tenant,
  id: (core) => core.id,
  lifetime: (core) => core.lifetime,
  created_at: (core) => core.createdAt,
  resume_url: (core) => core.resumeUrl,
  resume_binding: (core) => core.resumeBinding,
  metadata: (core) => core.metadata,
  run: (core) => core.run,
  wait: (core) => core.wait,
  resume: (core) => core.resume,
  notify_seq: (core) => core.notifySeq,
  generation: (core) => core.generation,
  job_seq: (core) => core.jobSeq,
  liveness_due_at: (core) => core.livenessDueAt,
  message_bytes: (core) => core.messageBytes,
} satisfies Record<keyof SessionRow, (core: Core) => unknown>;

/** Core fields no session column holds: they are counted from the rows when the core loads. */
export const DERIVED_CORE_FIELDS = [
  "messageCount",
  "unacked",
] as const satisfies readonly (keyof Core)[];

const COLUMN_NAMES = Object.keys(SESSION_COLUMNS) as (keyof SessionRow)[];
const columnValues = (core: Core) =>
  COLUMN_NAMES.map((column) => {
    const value = SESSION_COLUMNS[column](core);
    return value !== null && typeof value === "object" ? JSON.stringify(value) : value;
  });

// One statement writes the row, for a lifetime's first write and every later one: an INSERT and
// an UPDATE would each compile the JSON CHECK on `resume` and stay prepared for the object's life
// (16 KiB of SQLite heap each, measured), as an upsert compiles it into both its halves. REPLACE
// on the one-row table without a secondary index writes one row, like the UPDATE it replaces.
const WRITE_SESSION = `REPLACE INTO session (singleton, ${COLUMN_NAMES.join(", ")})
  VALUES (1, ${COLUMN_NAMES.map(() => "?").join(", ")})`;

const TABLES = [
  "session",
  "messages",
  "jobs",
  "inbox",
  "purged",
  "outputs",
  "finished_runs",
] as const;

/**
 * Writes the core's row: a new lifetime starts from empty tables; otherwise the row is written
 * when a column's value moved. Without a core before, the tables are empty already (a delete and
 * a schema without a session both end in `deleteAll`), so a first create prepares no DELETE.
 */
export function writeCore(sql: SqlStorage, before: Core | null, after: Core): void {
  if (before === null || before.lifetime !== after.lifetime) {
    if (before !== null) for (const table of TABLES) sql.exec(`DELETE FROM ${table}`);
    sql.exec(WRITE_SESSION, ...columnValues(after));
    return;
  }
  if (
    COLUMN_NAMES.some(
      (column) => SESSION_COLUMNS[column](before) !== SESSION_COLUMNS[column](after),
    )
  )
    sql.exec(WRITE_SESSION, ...columnValues(after));
}

// Two statements where one served both: a claim that named `acked_at` (even to keep it NULL)
// would rewrite its index entry, a billed row; claimed items are never acked ones, so a claim
// leaves the column alone.
const CLAIM_ITEM = "UPDATE inbox SET state = 'claimed', lease_expires_at = ? WHERE id = ?";
const ACK_ITEM =
  "UPDATE inbox SET state = 'acked', lease_expires_at = NULL, acked_at = ? WHERE id = ?";

/** Applies one write of a decision, inside the caller's transaction. */
export function applyWrite(sql: SqlStorage, write: Write): void {
  switch (write.type) {
    case "insert_message": {
      const { message } = write;
      sql.exec(
        "INSERT INTO messages (idx, role, content, metadata, created_at) VALUES (?, ?, ?, ?, ?)",
        message.index,
        message.role,
        JSON.stringify(message.content),
        JSON.stringify(message.metadata),
        message.createdAt,
      );
      return;
    }
    case "insert_job": {
      const { job } = write;
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
      return;
    }
    case "replace_job_token":
      sql.exec(
        "UPDATE jobs SET callback_token = ? WHERE handle = ?",
        write.callbackToken,
        write.handle,
      );
      return;
    case "complete_job": {
      const { job } = write;
      // The first result wins in storage too: a row that has one is never rewritten.
      sql.exec(
        `UPDATE jobs SET status = ?, exit_code = ?, output_truncated = ?, output_bytes_total = ?,
           ended_by = ?, completed_at = ?, generation = ?, output = ?, deadline_at = NULL,
           progress_at = NULL, progress_bytes = NULL, progress_tail = NULL
         WHERE handle = ? AND status = 'running'`,
        job.result.status,
        job.result.exitCode,
        job.result.outputTruncated ? 1 : 0,
        job.result.outputBytesTotal,
        job.result.endedBy,
        job.completedAt,
        job.generation,
        job.result.output,
        job.handle,
      );
      const full = job.result.fullOutput;
      if (full !== undefined) {
        sql.exec(
          `INSERT INTO outputs (job_seq, uploaded_bytes, bytes, sha256, parts) VALUES (?, 0, ?, ?, ?)
           ON CONFLICT (job_seq) DO UPDATE SET bytes = excluded.bytes, sha256 = excluded.sha256,
             parts = excluded.parts WHERE outputs.bytes IS NULL`,
          job.seq,
          full.bytes,
          full.sha256,
          JSON.stringify(full.parts),
        );
      }
      return;
    }
    case "insert_envelope": {
      const { item } = write;
      sql.exec(
        "INSERT INTO inbox (id, generation, state, lease_expires_at, acked_at, envelope) VALUES (?, ?, ?, ?, ?, ?)",
        item.envelope.id,
        item.envelope.generation,
        item.state,
        item.leaseExpiresAt,
        item.ackedAt,
        JSON.stringify(item.envelope),
      );
      return;
    }
    case "mark_claimed":
      for (const id of write.ids) sql.exec(CLAIM_ITEM, write.leaseExpiresAt, id);
      return;
    case "mark_acked":
      for (const id of write.ids) sql.exec(ACK_ITEM, write.ackedAt, id);
      return;
    case "purge_before":
      purgeBefore(sql, write.horizon, write.now);
      return;
    case "insert_finished_run":
      // Never a conflict: a finished id does not register again, so it cannot finish twice.
      sql.exec(
        "INSERT INTO finished_runs (run_id, finished_at) VALUES (?, ?)",
        write.runId,
        write.finishedAt,
      );
      return;
    case "update_liveness": {
      const { job } = write;
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
      return;
    }
    case "add_uploaded_bytes":
      sql.exec(
        `INSERT INTO outputs (job_seq, uploaded_bytes) SELECT seq, ? FROM jobs
         WHERE handle = ? AND status = 'running'
         ON CONFLICT (job_seq) DO UPDATE SET uploaded_bytes = uploaded_bytes + excluded.uploaded_bytes`,
        write.bytes,
        write.handle,
      );
      return;
    case "trim_audit":
      trimAudit(sql, write);
      return;
    default:
      assertNever(write);
  }
}

/**
 * Every row of the session as one value — the whole-session model the domain tests use. For
 * tests and upgrade checks only: a request never loads a whole session.
 */
export function snapshot(sql: SqlStorage): Session | null {
  const core = loadCore(sql);
  if (core === null) return null;
  const jobs = dict<Job>();
  for (const row of sql.exec<JobRow>(JOB_WITH_OUTPUT)) jobs[row.handle] = jobFromRow(row);
  const inbox = dict<InboxItem>();
  for (const row of sql.exec<InboxRow>("SELECT * FROM inbox")) inbox[row.id] = itemFromRow(row);
  const purged = dict<number>();
  for (const row of sql.exec<{ handle: string; purged_at: number }>("SELECT * FROM purged"))
    purged[row.handle] = row.purged_at;
  const messages = sql
    .exec<MessageRow>("SELECT * FROM messages ORDER BY idx")
    .toArray()
    .map(messageFromRow);
  const finishedRuns = dict<number>();
  for (const row of sql.exec<{ run_id: string; finished_at: number }>(
    "SELECT * FROM finished_runs",
  ))
    finishedRuns[row.run_id] = row.finished_at;
  return { ...core, messages, jobs, inbox, purged, finishedRuns };
}
