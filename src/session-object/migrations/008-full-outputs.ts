// Migration 8, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_8: Migration = {
  id: 8,
  description:
    "full outputs: each job's uploaded bytes and named full output, and the R2 prefixes to sweep",
  // Beside the jobs table, not in it: a column after `output` would make every summary read
  // walk that job's output. The sweep table outlives a session's delete (lifetime.ts, wipe).
  sql: `
      CREATE TABLE IF NOT EXISTS outputs (
        job_seq INTEGER PRIMARY KEY,
        uploaded_bytes INTEGER NOT NULL,
        bytes INTEGER,
        sha256 TEXT,
        parts TEXT,
        CHECK ((bytes IS NULL) = (sha256 IS NULL) AND (bytes IS NULL) = (parts IS NULL))
      );
      CREATE TABLE IF NOT EXISTS output_sweep (prefix TEXT PRIMARY KEY) WITHOUT ROWID;
    `,
};
