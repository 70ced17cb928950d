// The quotas the Worker counts across session objects: sessions per tenant (in D1) and open
// long-polls per tenant (in this isolate). What each quota is and answers is src/domain/quotas.ts's.
import { problem } from "../../shared/problem";
import { quotasFor } from "../domain/config";
import { longPollRefusal, sessionsRefusal } from "../domain/quotas";
import { admitSession, releaseSession } from "../session-index/tenant-sessions";
import type { AppContext } from "./context";

/**
 * Takes a place in the tenant's sessions quota for a create; null when the create may go ahead,
 * else the 429. Without the D1 binding there is nothing to count with, and nothing is refused.
 */
export async function admitCreate(
  c: AppContext,
  sessionId: string,
): Promise<{ refusal: Response | null; admitted: boolean }> {
  const db = c.env.INDEX;
  if (db === undefined) return { refusal: null, admitted: false };
  const quotas = quotasFor(c.var.config, c.var.tenant);
  const admission = await admitSession(db, {
    tenant: c.var.tenant,
    sessionId,
    limit: quotas.sessions,
    now: Date.now(),
  });
  if (admission !== "full") return { refusal: null, admitted: admission === "admitted" };
  const refusal = sessionsRefusal(quotas);
  return { refusal: problem(refusal.code, refusal.detail), admitted: false };
}

/**
 * Gives a session's place back. A failure here must not fail the delete that already happened:
 * the place stays taken (the quota errs strict by one) until the id is deleted again.
 */
export async function releasePlace(
  env: AppContext["env"],
  tenant: string,
  sessionId: string,
): Promise<void> {
  if (env.INDEX === undefined) return;
  try {
    await releaseSession(env.INDEX, { tenant, sessionId });
  } catch (error) {
    console.error(`tenant_sessions release failed: ${error instanceof Error ? error.name : "?"}`);
  }
}

/**
 * Long-polls open in this isolate, by tenant. Per isolate, not global: a tenant's polls spread over
 * many isolates in production each count alone (docs/decisions.md 703). It guards what failed —
 * one process holding 10,000 open requests — and the per-session count is exact in its object.
 */
const openPolls = new Map<string, number>();

/** Runs `poll` as one of the tenant's open long-polls, or answers 429 when it has too many. */
export async function asTenantPoll(
  c: AppContext,
  poll: () => Promise<Response>,
): Promise<Response> {
  const tenant = c.var.tenant;
  const open = openPolls.get(tenant) ?? 0;
  const refusal = longPollRefusal(
    open,
    quotasFor(c.var.config, tenant).longPollsPerTenant,
    "tenant",
  );
  if (refusal !== null) return problem(refusal.code, refusal.detail);
  openPolls.set(tenant, open + 1);
  try {
    return await poll();
  } finally {
    const left = (openPolls.get(tenant) ?? 1) - 1;
    if (left === 0) openPolls.delete(tenant);
    else openPolls.set(tenant, left);
  }
}
