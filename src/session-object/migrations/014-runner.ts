// Migration 14, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_14: Migration = {
  id: 14,
  description:
    "a session names its runner: one row at most, the base URL, the bearer token the service sends it (write-only: no answer shows the token) and a sequence number that tells the runners named apart",
  // A table of its own, not session columns: the token never enters the in-memory core, the view
  // or the index entry, which are all made from the session row. The row outlives a removal (its
  // url and token emptied) so that `seq`, which grows with every other runner named, never
  // starts again: it tells which runner started a job, since a replaced runner's ids name others.
  sql: `
      CREATE TABLE runner (
        only INTEGER PRIMARY KEY CHECK (only = 1),
        url TEXT,
        token TEXT,
        seq INTEGER NOT NULL,
        CHECK ((url IS NULL) = (token IS NULL))
      );
    `,
};
