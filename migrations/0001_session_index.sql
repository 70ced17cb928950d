-- The cross-session index of sessions that need attention (contract §8), one row per session.
-- The session object is the truth: it upserts its row after commits, newest version wins.
-- Idempotent (IF NOT EXISTS): the Worker applies this file itself when a statement finds no table,
-- and `wrangler d1 migrations apply INDEX --remote` applies it as migration 0001.
CREATE TABLE IF NOT EXISTS session_index (
  tenant TEXT NOT NULL,
  session_id TEXT NOT NULL,
  -- Grows with every entry a session object sends; an older one never overwrites a newer.
  version INTEGER NOT NULL,
  attention TEXT CHECK (attention IN ('suspended', 'resuming', 'failed', 'no_target')),
  since INTEGER,
  overdue_at INTEGER,
  -- JSON of IndexDetail (src/domain/index-entry.ts); null while the session needs no attention.
  detail TEXT,
  indexed_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, session_id)
) WITHOUT ROWID;
-- Quiet rows (attention NULL) are in no index but the primary key: they cost one row, no index rows.
CREATE INDEX IF NOT EXISTS session_index_by_attention
  ON session_index (attention, since, tenant, session_id, overdue_at) WHERE attention IS NOT NULL;
CREATE INDEX IF NOT EXISTS session_index_by_tenant
  ON session_index (tenant, attention, since, session_id, overdue_at) WHERE attention IS NOT NULL;
CREATE INDEX IF NOT EXISTS session_index_overdue
  ON session_index (overdue_at, tenant, session_id) WHERE overdue_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS session_index_overdue_by_tenant
  ON session_index (tenant, overdue_at, session_id) WHERE overdue_at IS NOT NULL;
