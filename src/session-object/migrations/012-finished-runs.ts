// Migration 12, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_12: Migration = {
  id: 12,
  description: "the run ids finished in the lifetime: a finished run id does not register again",
  // One small row per finished run, read by key when a run registers; WITHOUT ROWID so a finish
  // writes one billed row. It goes with the lifetime like the other rows (store/session-row.ts, writeCore;
  // a delete drops the whole storage). Runs that finished before this table have no row.
  sql: `
      CREATE TABLE finished_runs (run_id TEXT NOT NULL PRIMARY KEY, finished_at INTEGER NOT NULL)
        WITHOUT ROWID;
    `,
};
