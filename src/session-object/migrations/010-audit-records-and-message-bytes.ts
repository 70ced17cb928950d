// Migration 10, shipped and frozen: never edited (a change is a new migration appended).
import type { Migration } from "./migration";

export const MIGRATION_10: Migration = {
  id: 10,
  description:
    "the audit trail's records ring (accepted completions, deliveries, operator actions, ceilings, cancels) and the messages' bytes",
  // Each ring numbers its events from 0 (`ring_seq`) and keeps position p in slot
  // p % AUDIT_MAX_EVENTS. The records already in `audit` move to `audit_kept` in seq order, and
  // the noise left is numbered again, both from 0: the old ring held at most AUDIT_MAX_EVENTS
  // rows (its slots were seq % AUDIT_MAX_EVENTS), so each position is below AUDIT_MAX_EVENTS and
  // is its own slot, which this SQL can write without knowing the setting. The noise's slots
  // move through negatives so no two rows ever hold one slot mid-update.
  sql: `
      CREATE TABLE audit_kept (
        slot INTEGER PRIMARY KEY,
        ring_seq INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        at INTEGER NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('completion', 'delivery', 'operator', 'ceiling', 'cancel')),
        detail TEXT NOT NULL
      );
      ALTER TABLE audit ADD COLUMN ring_seq INTEGER NOT NULL DEFAULT 0;
      INSERT INTO audit_kept (slot, ring_seq, seq, at, type, detail)
        SELECT row_number() OVER (ORDER BY seq) - 1, row_number() OVER (ORDER BY seq) - 1,
          seq, at, type, detail FROM audit
        WHERE type IN ('delivery', 'operator', 'ceiling', 'cancel')
          OR (type = 'completion' AND json_extract(detail, '$.outcome') = 'accepted');
      DELETE FROM audit WHERE type IN ('delivery', 'operator', 'ceiling', 'cancel')
        OR (type = 'completion' AND json_extract(detail, '$.outcome') = 'accepted');
      UPDATE audit SET ring_seq = numbered.position
        FROM (SELECT slot, row_number() OVER (ORDER BY seq) - 1 AS position FROM audit) AS numbered
        WHERE audit.slot = numbered.slot;
      UPDATE audit SET slot = -1 - ring_seq;
      UPDATE audit SET slot = ring_seq;
      ALTER TABLE session ADD COLUMN message_bytes INTEGER NOT NULL DEFAULT 0;
    `,
};
