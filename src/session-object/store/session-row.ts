// The session's one row: the core the object keeps in memory, read at load and written through
// one column table. Which commit writes it, and when, is left to the store's `persist`.

import type { Core } from "../../domain/decision";
import type { Resume, Run, Wait } from "../../domain/state";
import { parseOrNull } from "./columns";

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

/** The core the object keeps in memory: no message, job or inbox row; counters read once. */
export function loadCore(sql: SqlStorage): Core | null {
  // One statement: the row with the counts the core derives from other tables.
  const row = sql
    .exec<SessionRow & { message_count: number; unacked_count: number }>(
      `SELECT *, (SELECT COALESCE(MAX(idx) + 1, 0) FROM messages) AS message_count,
         (SELECT COUNT(*) FROM inbox WHERE acked_at IS NULL) AS unacked_count
       FROM session WHERE singleton = 1`,
    )
    .toArray()[0];
  if (row === undefined) return null;
  return {
    tenant: row.tenant,
    id: row.id,
    lifetime: row.lifetime,
    createdAt: row.created_at,
    resumeUrl: row.resume_url,
    resumeBinding: row.resume_binding,
    metadata: JSON.parse(row.metadata),
    messageCount: row.message_count,
    messageBytes: row.message_bytes,
    jobSeq: row.job_seq,
    unacked: row.unacked_count,
    run: parseOrNull<Run>(row.run),
    wait: parseOrNull<Wait>(row.wait),
    resume: parseOrNull<Resume>(row.resume),
    notifySeq: row.notify_seq,
    generation: row.generation,
    livenessDueAt: row.liveness_due_at,
  };
}

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

/** Every table of a lifetime: a new lifetime starts with them empty. */
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
  const moved = COLUMN_NAMES.some(
    (column) => SESSION_COLUMNS[column](before) !== SESSION_COLUMNS[column](after),
  );
  if (moved) sql.exec(WRITE_SESSION, ...columnValues(after));
}
