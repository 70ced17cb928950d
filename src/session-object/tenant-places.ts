// The session's place in its tenant's sessions quota (D1 `tenant_sessions`), taken by a create and
// given back by a delete, each inside the object's one lifecycle turn so the count and the storage
// change together. What a place is, and the refusal when none is left, are the domain's.
import { quotasFor } from "../domain/config";
import type { Failure } from "../domain/errors";
import { sessionsRefusal } from "../domain/quotas";
import { admitSession, adoptSession, releaseSession } from "../session-index/tenant-sessions";
import type { Lifetime } from "./lifetime";

/** What a create got: a new place, the one the id held already, none (no count), or the 429. */
export type Place = "admitted" | "listed" | "uncounted" | Failure;

export async function takePlace(
  lifetime: Lifetime,
  tenant: string,
  sessionId: string,
): Promise<Place> {
  const db = lifetime.tenantSessions;
  if (db === undefined) return "uncounted";
  const quotas = quotasFor(lifetime.loop.config, tenant);
  const admission = await admitSession(db, {
    tenant,
    sessionId,
    limit: quotas.sessions,
    now: Date.now(),
  });
  return admission === "full" ? sessionsRefusal(quotas) : admission;
}

/**
 * Gives the place back after the delete of a session that existed (or a create that committed
 * nothing). A failure must not fail the delete that already happened: the place stays taken (the
 * quota errs strict by one) until the id is created and deleted again.
 */
export async function givePlaceBack(
  lifetime: Lifetime,
  tenant: string,
  sessionId: string,
): Promise<void> {
  const db = lifetime.tenantSessions;
  if (db === undefined) return;
  try {
    await releaseSession(db, { tenant, sessionId });
  } catch (error) {
    console.error(`tenant_sessions release failed: ${error instanceof Error ? error.name : "?"}`);
  }
}

/**
 * A session that exists holds a place: one made before the count existed takes it when its id is
 * created again (answered 409), beyond the quota if need be, since it exists already. Best effort.
 */
export async function adoptPlace(
  lifetime: Lifetime,
  tenant: string,
  sessionId: string,
): Promise<void> {
  const db = lifetime.tenantSessions;
  if (db === undefined) return;
  try {
    await adoptSession(db, { tenant, sessionId, now: Date.now() });
  } catch (error) {
    console.error(`tenant_sessions adopt failed: ${error instanceof Error ? error.name : "?"}`);
  }
}
