// Full outputs in storage: the reference beside each job and its upload tally (`outputs`), and the
// R2 prefixes left to sweep (`output_sweep`, the only table a deleted session keeps). The parts
// themselves live in R2; deleting them is output-sweep.ts's.

import type { FullOutput } from "../../domain/state";
import { MIGRATION_8 } from "../migrations/008-full-outputs";
import type { Writers } from "./columns";
import { tableNames } from "./table-names";

/** The reference a completion names, stored once: a result that has one keeps it. */
export function storeReference(sql: SqlStorage, jobSeq: number, full: FullOutput): void {
  sql.exec(
    `INSERT INTO outputs (job_seq, uploaded_bytes, bytes, sha256, parts) VALUES (?, 0, ?, ?, ?)
           ON CONFLICT (job_seq) DO UPDATE SET bytes = excluded.bytes, sha256 = excluded.sha256,
             parts = excluded.parts WHERE outputs.bytes IS NULL`,
    jobSeq,
    full.bytes,
    full.sha256,
    JSON.stringify(full.parts),
  );
}

export const OUTPUT_WRITERS: Writers<"add_uploaded_bytes"> = {
  add_uploaded_bytes: (sql, write) => {
    sql.exec(
      `INSERT INTO outputs (job_seq, uploaded_bytes) SELECT seq, ? FROM jobs
         WHERE handle = ? AND status = 'running'
         ON CONFLICT (job_seq) DO UPDATE SET uploaded_bytes = uploaded_bytes + excluded.uploaded_bytes`,
      write.bytes,
      write.handle,
    );
  },
};

/**
 * The bytes of full-output parts the session's jobs uploaded (the full-output bytes quota's
 * count): one row per job that uploaded, and a purged job's row goes with it.
 */
export const fullOutputBytesHeld = (sql: SqlStorage): number =>
  sql.exec<{ n: number }>("SELECT COALESCE(SUM(uploaded_bytes), 0) AS n FROM outputs").one().n;

/** The purged jobs that uploaded parts: their prefixes go to the sweep. */
export const uploadsCompletedBy = (
  sql: SqlStorage,
  horizon: number,
): { lifetime: string; handle: string; seq: number }[] =>
  sql
    .exec<{ lifetime: string; handle: string; seq: number }>(
      `SELECT j.lifetime, j.handle, j.seq FROM jobs j JOIN outputs o ON o.job_seq = j.seq
       WHERE j.completed_at <= ?`,
      horizon,
    )
    .toArray();

// ---- the prefixes left to sweep ---------------------------------------------------------

/**
 * The sweep table outlives a wipe, which drops the schema: the migration that made it makes it
 * again (its statements are all IF NOT EXISTS; the outputs table it makes beside it stays empty).
 */
const SWEEP_TABLE = MIGRATION_8.sql;
const QUEUE_PREFIX = "INSERT OR IGNORE INTO output_sweep (prefix) VALUES (?)";

/** Whether any prefix waits for its sweep (the table may not exist: no upload ever happened). */
export const sweepPending = (sql: SqlStorage): boolean =>
  tableNames(sql).has("output_sweep") && prefixesLeft(sql);

/** Whether any prefix is left in the table (which exists). */
export const prefixesLeft = (sql: SqlStorage): boolean =>
  sql.exec("SELECT 1 FROM output_sweep LIMIT 1").toArray().length > 0;

const uploadedAny = (sql: SqlStorage): boolean =>
  tableNames(sql).has("outputs") && sql.exec("SELECT 1 FROM outputs LIMIT 1").toArray().length > 0;

/**
 * What a session's delete must still sweep: what waited already, and the lifetime's own prefix
 * when any part of it was uploaded. Read before the storage is wiped.
 */
export function prefixesToKeep(sql: SqlStorage, lifetimePrefix: string): string[] {
  const pending = sweepPending(sql);
  const uploaded = uploadedAny(sql);
  if (!pending && !uploaded) return [];
  const waiting = pending
    ? sql
        .exec<{ prefix: string }>("SELECT prefix FROM output_sweep")
        .toArray()
        .map((row) => row.prefix)
    : [];
  return uploaded ? [...waiting, lifetimePrefix] : waiting;
}

/** Queues a prefix for the sweep (inside a commit: the purge of a job that uploaded). */
export const queuePrefix = (sql: SqlStorage, prefix: string): void => {
  sql.exec(QUEUE_PREFIX, prefix);
};

/** After the wipe: the prefixes go back into a table of their own, the only storage left. */
export function keepPrefixes(sql: SqlStorage, prefixes: readonly string[]): void {
  sql.exec(SWEEP_TABLE);
  for (const prefix of prefixes) sql.exec(QUEUE_PREFIX, prefix);
}

/** The next prefix to sweep; undefined when none is left. */
export const nextPrefix = (sql: SqlStorage): string | undefined =>
  sql.exec<{ prefix: string }>("SELECT prefix FROM output_sweep LIMIT 1").toArray()[0]?.prefix;

/** A prefix found empty in R2 is forgotten. */
export const forgetPrefix = (sql: SqlStorage, prefix: string): void => {
  sql.exec("DELETE FROM output_sweep WHERE prefix = ?", prefix);
};
