// Migration 13, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_13: Migration = {
  id: 13,
  description:
    "the audit trail becomes one append-only table: records told from noise by a column, each kind numbered on its own; the two rings and the session row's held record go",
  // `kind_seq` numbers each kind's events from 1, so the newest AUDIT_MAX_EVENTS of a kind are
  // those numbered past its last minus the cap (store/audit.ts). Every event the rings and the
  // session row held keeps its seq; past the cap or the retention, the reads hide it and the
  // alarm's trim deletes it. The rings held noise (`audit`) and records (`audit_kept`, a row's
  // `second` event, the session row's `audit_held`) apart since migration 10.
  sql: `
      CREATE TABLE audit_events (
        seq INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('completion', 'delivery', 'run_registered', 'run_suspended',
          'run_finished', 'claim', 'ack', 'ceiling', 'operator', 'cancel')),
        record INTEGER NOT NULL CHECK (record IN (0, 1)),
        kind_seq INTEGER NOT NULL,
        detail TEXT NOT NULL
      );
      INSERT INTO audit_events (seq, at, type, record, kind_seq, detail)
        SELECT seq, at, type, record, row_number() OVER (PARTITION BY record ORDER BY seq), detail
        FROM (
          SELECT seq, at, type, 0 AS record, detail FROM audit
          UNION ALL SELECT seq, at, type, 1, detail FROM audit_kept
          UNION ALL SELECT second ->> '$.seq', second ->> '$.at', second ->> '$.type', 1,
            second ->> '$.detail' FROM audit_kept WHERE second IS NOT NULL
          UNION ALL SELECT audit_held ->> '$.seq', audit_held ->> '$.at', audit_held ->> '$.type', 1,
            audit_held ->> '$.detail' FROM session WHERE audit_held IS NOT NULL
        );
      DROP TABLE audit;
      DROP TABLE audit_kept;
      ALTER TABLE session DROP COLUMN audit_held;
    `,
};
