// Migration 5, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_5: Migration = {
  id: 5,
  description:
    "the audit trail: a ring of AUDIT_MAX_EVENTS slots, each overwritten in place (one row written per event)",
  sql: `
      CREATE TABLE audit (
        slot INTEGER PRIMARY KEY,
        seq INTEGER NOT NULL,
        at INTEGER NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('completion', 'delivery', 'run_registered', 'run_suspended',
          'run_finished', 'claim', 'ack', 'ceiling', 'operator')),
        detail TEXT NOT NULL
      );
    `,
};
