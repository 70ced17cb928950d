// The sessions quota's count in D1: one row per session a tenant holds, admitted in one
// conditional insert (D1 runs one statement at a time, so two creates cannot both take the last
// place). Whether a session exists is the session object's; this table only counts.
import schemaSql from "../../migrations/0003_tenant_sessions.sql";
import { statementsOf, withSchema } from "./index-store";

const STATEMENTS = statementsOf(schemaSql);

export type Admission = "admitted" | "listed" | "full";

/**
 * Takes a place for `sessionId` unless the tenant holds `limit` already. `listed`: the id holds one
 * already (it exists, or a release was lost), so the create goes ahead and the object decides.
 */
export async function admitSession(
  db: D1Database,
  cmd: { tenant: string; sessionId: string; limit: number; now: number },
): Promise<Admission> {
  // A tenant without a limit is still counted, so a quota set later counts what it holds.
  const limit = Number.isFinite(cmd.limit) ? cmd.limit : Number.MAX_SAFE_INTEGER;
  const inserted = await withSchema(
    db,
    () =>
      db
        .prepare(
          `INSERT INTO tenant_sessions (tenant, session_id, admitted_at)
           SELECT ?1, ?2, ?4 WHERE (SELECT COUNT(*) FROM tenant_sessions WHERE tenant = ?1) < ?3
           ON CONFLICT (tenant, session_id) DO NOTHING`,
        )
        .bind(cmd.tenant, cmd.sessionId, limit, cmd.now)
        .run(),
    STATEMENTS,
  );
  if ((inserted.meta.changes ?? 0) > 0) return "admitted";
  const listed = await db
    .prepare("SELECT 1 AS listed FROM tenant_sessions WHERE tenant = ?1 AND session_id = ?2")
    .bind(cmd.tenant, cmd.sessionId)
    .first();
  return listed === null ? "full" : "listed";
}

/** Gives the place back: after a delete, after a create that failed, and after a 404 delete. */
export async function releaseSession(
  db: D1Database,
  cmd: { tenant: string; sessionId: string },
): Promise<void> {
  await withSchema(
    db,
    () =>
      db
        .prepare("DELETE FROM tenant_sessions WHERE tenant = ?1 AND session_id = ?2")
        .bind(cmd.tenant, cmd.sessionId)
        .run(),
    STATEMENTS,
  );
}
