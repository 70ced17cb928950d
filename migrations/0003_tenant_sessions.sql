-- The sessions each tenant holds, for its sessions quota (docs/tenants.md "Quotas"): a row per
-- session, inserted before the session object creates it and deleted after the delete.
-- Idempotent (IF NOT EXISTS): the Worker applies this file itself when a statement finds no table,
-- and `wrangler d1 migrations apply INDEX --remote` applies it as migration 0003.
CREATE TABLE IF NOT EXISTS tenant_sessions (
  tenant TEXT NOT NULL,
  session_id TEXT NOT NULL,
  admitted_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, session_id)
) WITHOUT ROWID;
