// The sessions quota's count in D1: one row per session a tenant holds, admitted in one
// conditional insert (D1 runs one statement at a time, so two creates cannot both take the last
// place). The session object takes and gives back its row in step with its storage; the Worker
// reads it to answer a drain on an id that holds none without starting an object.
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

/** Counts a session that exists but holds no place (made before the count), whatever the quota. */
export async function adoptSession(
  db: D1Database,
  cmd: { tenant: string; sessionId: string; now: number },
): Promise<void> {
  await withSchema(
    db,
    () =>
      db
        .prepare(
          `INSERT INTO tenant_sessions (tenant, session_id, admitted_at) VALUES (?1, ?2, ?3)
           ON CONFLICT (tenant, session_id) DO NOTHING`,
        )
        .bind(cmd.tenant, cmd.sessionId, cmd.now)
        .run(),
    STATEMENTS,
  );
}

/** Whether `sessionId` holds a place in its tenant's count. */
export async function holdsPlace(
  db: D1Database,
  cmd: { tenant: string; sessionId: string },
): Promise<boolean> {
  const listed = await withSchema(
    db,
    () =>
      db
        .prepare("SELECT 1 AS listed FROM tenant_sessions WHERE tenant = ?1 AND session_id = ?2")
        .bind(cmd.tenant, cmd.sessionId)
        .first(),
    STATEMENTS,
  );
  return listed !== null;
}

/** Gives the place back: after the delete of a session that existed, or a create that failed. */
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
