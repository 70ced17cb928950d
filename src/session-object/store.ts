// SQL statements and row ⇄ domain mappers for one session; writes only the rows a decision changed.
// Wrapping a persist in a transaction and keeping the in-memory copy is left to the object.
import type { InboxItem, Job, Message, Resume, Run, Session, Wait } from "../domain/state";

type SessionRow = {
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
};

type JobRow = {
  handle: string;
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

function jobFromRow(row: JobRow): Job {
  return {
    handle: row.handle,
    command: row.command,
    lifetime: row.lifetime,
    reservedAt: row.reserved_at,
    callbackToken: row.callback_token,
    completedAt: row.completed_at,
    generation: row.generation,
    result:
      row.status === "running"
        ? null
        : {
            status: row.status as NonNullable<Job["result"]>["status"],
            exitCode: row.exit_code,
            output: row.output ?? "",
            outputTruncated: row.output_truncated === 1,
            outputBytesTotal: row.output_bytes_total ?? 0,
            endedBy: row.ended_by as NonNullable<Job["result"]>["endedBy"],
          },
  };
}

export function loadSession(sql: SqlStorage): Session | null {
  const row = sql.exec<SessionRow>("SELECT * FROM session WHERE singleton = 1").toArray()[0];
  if (row === undefined) return null;
  const messages: Message[] = sql
    .exec<MessageRow>("SELECT * FROM messages ORDER BY idx")
    .toArray()
    .map((message) => ({
      index: message.idx,
      role: message.role as Message["role"],
      content: JSON.parse(message.content),
      metadata: JSON.parse(message.metadata),
      createdAt: message.created_at,
    }));
  const jobs: Record<string, Job> = {};
  for (const jobRow of sql.exec<JobRow>("SELECT * FROM jobs").toArray())
    jobs[jobRow.handle] = jobFromRow(jobRow);
  const inbox: Record<string, InboxItem> = {};
  for (const item of sql.exec<InboxRow>("SELECT * FROM inbox").toArray()) {
    inbox[item.id] = {
      envelope: JSON.parse(item.envelope),
      state: item.state as InboxItem["state"],
      leaseExpiresAt: item.lease_expires_at,
      ackedAt: item.acked_at,
    };
  }
  const purged: Record<string, number> = {};
  for (const tomb of sql
    .exec<{ handle: string; purged_at: number }>("SELECT * FROM purged")
    .toArray()) {
    purged[tomb.handle] = tomb.purged_at;
  }
  return {
    id: row.id,
    lifetime: row.lifetime,
    createdAt: row.created_at,
    resumeUrl: row.resume_url,
    metadata: JSON.parse(row.metadata),
    messages,
    run: parseOrNull<Run>(row.run),
    wait: parseOrNull<Wait>(row.wait),
    resume: parseOrNull<Resume>(row.resume),
    notifySeq: row.notify_seq,
    generation: row.generation,
    jobs,
    inbox,
    purged,
  };
}

function writeJob(sql: SqlStorage, job: Job): void {
  const result = job.result;
  sql.exec(
    // An upsert writes one row; INSERT OR REPLACE deletes and inserts (two billed rows).
    `INSERT INTO jobs (handle, command, lifetime, reserved_at, callback_token, status, exit_code,
       output, output_truncated, output_bytes_total, ended_by, completed_at, generation)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (handle) DO UPDATE SET command = excluded.command, lifetime = excluded.lifetime,
       reserved_at = excluded.reserved_at, callback_token = excluded.callback_token, status = excluded.status,
       exit_code = excluded.exit_code, output = excluded.output, output_truncated = excluded.output_truncated,
       output_bytes_total = excluded.output_bytes_total, ended_by = excluded.ended_by,
       completed_at = excluded.completed_at, generation = excluded.generation`,
    job.handle,
    job.command,
    job.lifetime,
    job.reservedAt,
    job.callbackToken,
    result?.status ?? "running",
    result?.exitCode ?? null,
    result?.output ?? null,
    result === null ? null : result.outputTruncated ? 1 : 0,
    result?.outputBytesTotal ?? null,
    result?.endedBy ?? null,
    job.completedAt,
    job.generation,
  );
}

function writeInboxItem(sql: SqlStorage, item: InboxItem): void {
  sql.exec(
    `INSERT INTO inbox (id, generation, state, lease_expires_at, acked_at, envelope) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET generation = excluded.generation, state = excluded.state,
       lease_expires_at = excluded.lease_expires_at, acked_at = excluded.acked_at, envelope = excluded.envelope`,
    item.envelope.id,
    item.envelope.generation,
    item.state,
    item.leaseExpiresAt,
    item.ackedAt,
    JSON.stringify(item.envelope),
  );
}

/** Calls `write` for entries that are new or replaced and `remove` for keys that are gone. */
function diff<T>(
  before: Readonly<Record<string, T>>,
  after: Readonly<Record<string, T>>,
  write: (value: T, key: string) => void,
  remove: (key: string) => void,
): void {
  if (before === after) return;
  for (const [key, value] of Object.entries(after)) if (before[key] !== value) write(value, key);
  for (const key of Object.keys(before)) if (!(key in after)) remove(key);
}

const TABLES = ["session", "messages", "jobs", "inbox", "purged"] as const;

/** Domain transitions replace what they change, so reference equality tells what moved. */
const sessionRowChanged = (before: Session, after: Session): boolean =>
  before.id !== after.id ||
  before.createdAt !== after.createdAt ||
  before.resumeUrl !== after.resumeUrl ||
  before.metadata !== after.metadata ||
  before.run !== after.run ||
  before.wait !== after.wait ||
  before.resume !== after.resume ||
  before.notifySeq !== after.notifySeq ||
  before.generation !== after.generation;

function writeSessionRow(sql: SqlStorage, session: Session): void {
  sql.exec(
    `INSERT INTO session (singleton, id, lifetime, created_at, resume_url, metadata, run, wait, resume, notify_seq,
       generation) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (singleton) DO UPDATE SET id = excluded.id, lifetime = excluded.lifetime,
       created_at = excluded.created_at, resume_url = excluded.resume_url, metadata = excluded.metadata,
       run = excluded.run, wait = excluded.wait, resume = excluded.resume, notify_seq = excluded.notify_seq,
       generation = excluded.generation`,
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
  );
}

/** Writes the difference between two states; `before` must be what storage holds now. */
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
    (job) => writeJob(sql, job),
    (handle) => sql.exec("DELETE FROM jobs WHERE handle = ?", handle),
  );
  diff(
    before.inbox,
    after.inbox,
    (item) => writeInboxItem(sql, item),
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
