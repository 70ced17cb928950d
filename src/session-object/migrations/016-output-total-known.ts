// Migration 16, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_16: Migration = {
  id: 16,
  description:
    "Jobs: whether output_bytes_total is what the command wrote (0: the runner sent none for a cut output, so it holds only the cut output's size)",
  // Rows from before were counted the same way; they read as known, as they always did.
  sql: `
      ALTER TABLE jobs ADD COLUMN output_bytes_total_known INTEGER NOT NULL DEFAULT 1
        CHECK (output_bytes_total_known IN (0, 1));
    `,
};
