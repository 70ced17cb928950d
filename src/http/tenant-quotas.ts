// What the Worker reads or counts across session objects: the sessions count (in D1, kept by the
// session objects), read before a drain, and open long-polls per tenant (in this isolate). What
// each quota is and answers is src/domain/quotas.ts's.
import { problem } from "../../shared/problem";
import { quotasFor } from "../domain/config";
import { longPollRefusal } from "../domain/quotas";
import { holdsPlace } from "../session-index/tenant-sessions";
import type { AppContext } from "./context";

/**
 * Whether the session may exist, so a drain on it is worth an object: false only when the count
 * says the id holds no place. Such a drain answers 404 without starting an object, which would
 * keep a database file for every id ever asked. A session holds its place from before its create
 * commits until after its delete, so a live session is never missed; without the D1 binding, or
 * when D1 fails, the object is asked as ever.
 */
export async function mayExist(c: AppContext, sessionId: string): Promise<boolean> {
  const db = c.env.INDEX;
  if (db === undefined) return true;
  try {
    return await holdsPlace(db, { tenant: c.var.tenant, sessionId });
  } catch (error) {
    console.error(`tenant_sessions read failed: ${error instanceof Error ? error.name : "?"}`);
    return true;
  }
}

/**
 * Long-polls open in this isolate, by tenant. Per isolate, not global: a tenant's polls spread over
 * many isolates in production each count alone (a global count would need a shared, leased counter
 * on every poll's way in and out; docs/design/tenants-and-quotas.md). It guards what failed —
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
