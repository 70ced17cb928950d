// Helpers of the index's pool tests: a tenant of each test's own, the list as an operator sees it,
// the D1 row itself, sessions suspended over RPC, and the object's indexer (its writer replaceable).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { tenantSessionStub } from "../../src/http/context";
import { d1Writer, type Indexer } from "../../src/session-object/indexer";
import type { SessionObject } from "../../src/session-object/session-object";
import { call, hookUrl } from "./api";
import { OPERATOR_TOKEN } from "./secrets";

export const OPERATOR = OPERATOR_TOKEN;
export const db = (): D1Database => {
  if (env.INDEX === undefined) throw new Error("the INDEX binding is missing");
  return env.INDEX;
};

let tenants = 0;
/** A tenant no other test uses (a tenant is 1-64 chars of [a-z0-9-]). */
export const freshTenant = (label: string): string => {
  tenants += 1;
  return `${label}-${Date.now().toString(36)}-${tenants}`;
};

export const list = async (query: string) => {
  const answer = await call("GET", `/v1/ops/sessions?${query}`, { token: OPERATOR });
  expect(answer.status).toBe(200);
  return answer.body as {
    sessions: Array<Record<string, any>>;
    next: string | null;
    counts: Record<string, number>;
  };
};

/** The D1 row itself, bypassing the list route (which repairs what it reads). */
export const rowOf = async (tenant: string, sessionId: string) =>
  db()
    .prepare("SELECT * FROM session_index WHERE tenant = ?1 AND session_id = ?2")
    .bind(tenant, sessionId)
    .first<{
      attention: string | null;
      since: number | null;
      version: number;
      detail: string | null;
    }>();

export const ok = <T>(
  answer: { ok: true; value: T } | { ok: false; code: string; detail: string },
): T => {
  if (!answer.ok) throw new Error(`${answer.code}: ${answer.detail}`);
  return answer.value;
};

/** A session of `tenant`, created over RPC, with jobs reserved and a run suspended on them. */
export async function suspendedIn(
  tenant: string,
  sid: string,
  options: { handles?: string[]; resumeUrl?: string | null; ceilingMs?: number } = {},
) {
  const handles = options.handles ?? ["h"];
  const stub = tenantSessionStub(env, tenant, sid);
  ok(
    await stub.create({
      tenant,
      id: sid,
      resumeUrl: options.resumeUrl === undefined ? hookUrl(`${tenant}-${sid}`) : options.resumeUrl,
      metadata: {},
    }),
  );
  const tokens: Record<string, string> = {};
  for (const handle of handles) {
    tokens[handle] = ok(await stub.reserveJob({ handle, command: `run ${handle}` })).token;
  }
  const runId = ok(await stub.registerRun({ runId: null, resumeId: null })).run_id;
  ok(await stub.suspend({ runId, handles, wake: "all", ceilingMs: options.ceilingMs ?? null }));
  return { stub, tokens, runId };
}

/** The object's indexer, in its private loop: element access is TypeScript's way in for a test. */
// biome-ignore lint/complexity/useLiteralKeys: `.loop` would not compile from outside the class
export const indexerIn = (instance: SessionObject): Indexer => instance["loop"].indexer;

export const indexerOf = (stub: DurableObjectStub<SessionObject>): Promise<Indexer> =>
  runInDurableObject(stub, indexerIn);

/** Makes every index write of the object fail, as a lost update would. */
export const dropUpdates = (stub: DurableObjectStub<SessionObject>) =>
  runInDurableObject(stub, (instance) => {
    indexerIn(instance).writer = {
      upsert: () => Promise.reject(new Error("index update dropped by the test")),
      remove: () => Promise.reject(new Error("index update dropped by the test")),
    };
  });

export const restoreUpdates = (stub: DurableObjectStub<SessionObject>) =>
  runInDurableObject(stub, (instance) => {
    indexerIn(instance).writer = d1Writer(db());
  });
