// Migration 11, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_11: Migration = {
  id: 11,
  description:
    "a wake's records share one row: the session row may hold the newest record until the next one, and a records row may carry a second event; one inbox index on acked_at instead of two",
  // Two ADD COLUMNs and an index swap: no table is rebuilt and no temp database opened.
  // `audit_held` and `second` each hold one event as JSON, `{seq, at, type, detail}` with
  // `detail` the event's other fields as JSON text; both null on every row written before. The
  // inbox's (state, lease_expires_at) index moved on every claim and ack; one index on acked_at
  // serves the same queries (unacked items are its NULL entries, in generation order) and a
  // claim does not touch it.
  sql: `
      ALTER TABLE session ADD COLUMN audit_held TEXT;
      ALTER TABLE audit_kept ADD COLUMN second TEXT;
      DROP INDEX inbox_by_state;
      DROP INDEX inbox_by_ack;
      CREATE INDEX inbox_by_acked_at ON inbox (acked_at);
    `,
};
