-- The operators' console sessions (docs/operators.md "Signing in"): one row per sign-in, ended by
-- sign-out, by the idle timeout and by the absolute lifetime; and the sign-in attempts per client.
-- Idempotent (IF NOT EXISTS): the Worker applies this file itself when a statement finds no table,
-- and `wrangler d1 migrations apply INDEX --remote` applies it as migration 0002.
CREATE TABLE IF NOT EXISTS console_sessions (
  -- SHA-256 (hex) of the opaque id in the cookie: a read of this table opens no console.
  id_hash TEXT PRIMARY KEY,
  -- SHA-256 (hex) of the operator token signed in with: removing it from OPERATOR_TOKENS ends the session.
  operator_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS console_sessions_by_last_seen ON console_sessions (last_seen_at);
-- Sign-in attempts per client (src/domain/console-session.ts throttleKey) in the current window;
-- counted before the token is checked, cleared by a successful sign-in.
CREATE TABLE IF NOT EXISTS console_sign_in_attempts (
  client TEXT PRIMARY KEY,
  window_start INTEGER NOT NULL,
  attempts INTEGER NOT NULL
) WITHOUT ROWID;
