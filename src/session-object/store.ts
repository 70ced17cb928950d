// SQL statements and row ⇄ domain mappers for one session: the core, the rows a rule touches, and
// writes of only what a decision changed. Transactions and the in-memory core are left to the object.
import { dict, own } from "../domain/records";
import type {
  InboxItem,
  Job,
  JobResult,
  Message,
  Resume,
  Run,
  Session,
  Wait,
} from "../domain/state";

type SessionRow = {
  tenant: string;
  id: string;
  lifetime: string;
  created_at: number;
  resume_url: string | null;
  metadata: string;
  run: string | null;
  wait: string | null;
  resume: string | null;
  notify_seq: number;
  generation: number;
  job_seq: number;
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
const jsonOrNull = (value: unknown): string | null =>
  value === null ? null : JSON.stringify(value);

/** A job row without its output (the last column, read only when selected): for summaries. */
const JOB_SUMMARY = `SELECT seq, handle, command, lifetime, reserved_at, callback_token, status, exit_code,
  output_truncated, output_bytes_total, ended_by, completed_at, generation, NULL AS output FROM jobs`;
const JOB_WITH_OUTPUT = "SELECT * FROM jobs";

function jobFromRow(row: JobRow): Job {
  const fields = {
    handle: row.handle,
    seq: row.seq,
    command: row.command,
    lifetime: row.lifetime,
    reservedAt: row.reserved_at,
    callbackToken: row.callback_token,
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
export function loadCore(sql: SqlStorage): Session | null {
  const row = sql.exec<SessionRow>("SELECT * FROM session WHERE singleton = 1").toArray()[0];
  if (row === undefined) return null;
  const counts = sql
    .exec<{ messages: number; unacked: number }>(
      `SELECT (SELECT COALESCE(MAX(idx) + 1, 0) FROM messages) AS messages,
              (SELECT COUNT(*) FROM inbox WHERE state IN ('pending', 'claimed')) AS unacked`,
    )
    .one();
  return {
    tenant: row.tenant,
    id: row.id,
    lifetime: row.lifetime,
    createdAt: row.created_at,
    resumeUrl: row.resume_url,
    metadata: JSON.parse(row.metadata),
    messages: [],
    messageCount: counts.messages,
    jobSeq: row.job_seq,
    unacked: counts.unacked,
    run: parseOrNull<Run>(row.run),
    wait: parseOrNull<Wait>(row.wait),
    resume: parseOrNull<Resume>(row.resume),
    notifySeq: row.notify_seq,
    generation: row.generation,
    jobs: {},
    inbox: {},
    purged: {},
  };
}

/** The jobs of `handles` (at most a wait's 64), with outputs only when the rule reads them. */
export function loadJobs(
  sql: SqlStorage,
  handles: readonly string[],
  withOutput: boolean,
): Record<string, Job> {
  const select = withOutput ? JOB_WITH_OUTPUT : JOB_SUMMARY;
  const jobs = dict<Job>();
  for (const handle of new Set(handles)) {
    const row = sql.exec<JobRow>(`${select} WHERE handle = ?`, handle).toArray()[0];
    if (row !== undefined) jobs[handle] = jobFromRow(row);
  }
  return jobs;
}

export function loadTombstones(
  sql: SqlStorage,
  handles: readonly string[],
): Record<string, number> {
  const purged = dict<number>();
  for (const handle of new Set(handles)) {
    const row = sql
      .exec<{ purged_at: number }>("SELECT purged_at FROM purged WHERE handle = ?", handle)
      .toArray()[0];
    if (row !== undefined) purged[handle] = row.purged_at;
  }
  return purged;
}

const CLAIMABLE = "(state = 'pending' OR (state = 'claimed' AND lease_expires_at <= ?))";

/**
 * The first claimable items by generation, at most `limit` and, past the first, only while their
 * envelopes fit in `maxBytes`: a claim never loads envelopes it cannot send. Sizes are read in SQL
 * first, so no envelope becomes a string before it is chosen.
 */
export function loadClaimable(
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
 * would be 64 MiB. The stand-in envelope carries id and generation only; `persistSession` never
 * rewrites an admitted envelope, so it cannot reach storage.
 */
export function loadForAck(sql: SqlStorage, ids: readonly string[]): Record<string, InboxItem> {
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
  sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM inbox WHERE state = 'acked'").one().n;

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
export function purgeBefore(sql: SqlStorage, horizon: number, now: number): void {
  sql.exec("DELETE FROM purged WHERE purged_at <= ?", horizon);
  sql.exec(
    `INSERT INTO purged (handle, purged_at) SELECT handle, ? FROM jobs WHERE completed_at <= ?
     ON CONFLICT (handle) DO UPDATE SET purged_at = excluded.purged_at`,
    now,
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
    `SELECT seq, 400 + octet_length(json_quote(command)) + 2 * octet_length(handle)
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

function writeJob(sql: SqlStorage, job: Job, previous: Job | undefined): void {
  // A terminal job changes only its callback token (a retired secret was replaced).
  if (previous !== undefined && previous.result !== null) {
    sql.exec("UPDATE jobs SET callback_token = ? WHERE handle = ?", job.callbackToken, job.handle);
    return;
  }
  const result = job.result;
  sql.exec(
    // An upsert writes one row; INSERT OR REPLACE deletes and inserts (two billed rows). The first
    // result wins in storage too: a job loaded without its output can never erase it.
    `INSERT INTO jobs (seq, handle, command, lifetime, reserved_at, callback_token, status, exit_code,
       output_truncated, output_bytes_total, ended_by, completed_at, generation, output)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (handle) DO UPDATE SET callback_token = excluded.callback_token,
       status = excluded.status, exit_code = excluded.exit_code,
       output_truncated = excluded.output_truncated, output_bytes_total = excluded.output_bytes_total,
       ended_by = excluded.ended_by, completed_at = excluded.completed_at,
       generation = excluded.generation, output = excluded.output
     WHERE jobs.status = 'running'`,
    job.seq,
    job.handle,
    job.command,
    job.lifetime,
    job.reservedAt,
    job.callbackToken,
    result?.status ?? "running",
    result?.exitCode ?? null,
    result === null ? null : result.outputTruncated ? 1 : 0,
    result?.outputBytesTotal ?? null,
    result?.endedBy ?? null,
    job.result === null ? null : job.completedAt,
    job.result === null ? null : job.generation,
    result?.output ?? null,
  );
}

function writeInboxItem(sql: SqlStorage, item: InboxItem, isNew: boolean): void {
  if (isNew) {
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
  // An admitted envelope never changes: only its delivery state moves.
  sql.exec(
    "UPDATE inbox SET state = ?, lease_expires_at = ?, acked_at = ? WHERE id = ?",
    item.state,
    item.leaseExpiresAt,
    item.ackedAt,
    item.envelope.id,
  );
}

/** Calls `write` for entries that are new or replaced and `remove` for keys that are gone. */
function diff<T>(
  before: Readonly<Record<string, T>>,
  after: Readonly<Record<string, T>>,
  write: (value: T, key: string, isNew: boolean) => void,
  remove: (key: string) => void,
): void {
  if (before === after) return;
  for (const [key, value] of Object.entries(after)) {
    if (before[key] !== value) write(value, key, !(key in before));
  }
  for (const key of Object.keys(before)) if (!(key in after)) remove(key);
}

const TABLES = ["session", "messages", "jobs", "inbox", "purged"] as const;

/** Domain transitions replace what they change, so reference equality tells what moved. */
const sessionRowChanged = (before: Session, after: Session): boolean =>
  before.tenant !== after.tenant ||
  before.id !== after.id ||
  before.createdAt !== after.createdAt ||
  before.resumeUrl !== after.resumeUrl ||
  before.metadata !== after.metadata ||
  before.run !== after.run ||
  before.wait !== after.wait ||
  before.resume !== after.resume ||
  before.notifySeq !== after.notifySeq ||
  before.generation !== after.generation ||
  before.jobSeq !== after.jobSeq;

function writeSessionRow(sql: SqlStorage, session: Session): void {
  sql.exec(
    `INSERT INTO session (singleton, id, lifetime, created_at, resume_url, metadata, run, wait, resume, notify_seq,
       generation, job_seq, tenant) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (singleton) DO UPDATE SET tenant = excluded.tenant, id = excluded.id, lifetime = excluded.lifetime,
       created_at = excluded.created_at, resume_url = excluded.resume_url, metadata = excluded.metadata,
       run = excluded.run, wait = excluded.wait, resume = excluded.resume, notify_seq = excluded.notify_seq,
       generation = excluded.generation, job_seq = excluded.job_seq`,
    session.id,
    session.lifetime,
    session.createdAt,
    session.resumeUrl,
    JSON.stringify(session.metadata),
    jsonOrNull(session.run),
    jsonOrNull(session.wait),
    jsonOrNull(session.resume),
    session.notifySeq,
    session.generation,
    session.jobSeq,
    session.tenant,
  );
}

/**
 * Writes the difference between two states of the rows a decision was given; `before` must agree
 * with storage for every row it holds. Rows it does not hold are left as they are.
 */
export function persistSession(
  sql: SqlStorage,
  before: Session | null,
  after: Session | null,
): void {
  if (before === after) return;
  if (after === null || before === null || before.lifetime !== after.lifetime) {
    for (const table of TABLES) sql.exec(`DELETE FROM ${table}`);
    if (after === null) return;
    writeSessionRow(sql, after);
    const empty: Session = { ...after, messages: [], jobs: {}, inbox: {}, purged: {} };
    persistSession(sql, empty, after);
    return;
  }
  if (sessionRowChanged(before, after)) writeSessionRow(sql, after);
  for (const message of after.messages.slice(before.messages.length)) {
    sql.exec(
      "INSERT INTO messages (idx, role, content, metadata, created_at) VALUES (?, ?, ?, ?, ?)",
      message.index,
      message.role,
      JSON.stringify(message.content),
      JSON.stringify(message.metadata),
      message.createdAt,
    );
  }
  diff(
    before.jobs,
    after.jobs,
    (job, handle) => writeJob(sql, job, own(before.jobs, handle)),
    (handle) => sql.exec("DELETE FROM jobs WHERE handle = ?", handle),
  );
  diff(
    before.inbox,
    after.inbox,
    (item, _id, isNew) => writeInboxItem(sql, item, isNew),
    (id) => sql.exec("DELETE FROM inbox WHERE id = ?", id),
  );
  diff(
    before.purged,
    after.purged,
    (purgedAt, handle) =>
      sql.exec(
        "INSERT INTO purged (handle, purged_at) VALUES (?, ?) ON CONFLICT (handle) DO UPDATE SET purged_at = excluded.purged_at",
        handle,
        purgedAt,
      ),
    (handle) => sql.exec("DELETE FROM purged WHERE handle = ?", handle),
  );
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
  return { ...core, messages, jobs, inbox, purged };
}
