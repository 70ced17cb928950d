// Shared HTTP plumbing: the app's types, path-id checks, the session stub and Result → Response.
// Rules about sessions are left to the domain behind the stub.
import type { Context } from "hono";
import type { Config } from "../domain/config";
import type { Result } from "../domain/errors";
import { ID_PATTERN } from "../domain/schemas";
import { sessionObjectName } from "../domain/tenants";
import type { Env } from "../env";
import { problem } from "./problem";

/** `tenant` is set by the agent-token check; routes without an agent token never read it. */
export type AppEnv = { Bindings: Env; Variables: { config: Config; tenant: string } };
export type AppContext = Context<AppEnv>;

/** Path ids outside the charset cannot name a session or job, so they are simply not found. */
export function pathIds<K extends string>(
  c: AppContext,
  ...names: K[]
): Record<K, string> | Response {
  const ids = {} as Record<K, string>;
  for (const name of names) {
    const value = c.req.param(name) ?? "";
    if (!ID_PATTERN.test(value)) return problem("not_found", "no such session or job");
    ids[name] = value;
  }
  return ids;
}

/** The session object of `sessionId` in the given tenant (another tenant's id is another object). */
export const tenantSessionStub = (env: Env, tenant: string, sessionId: string) =>
  env.SESSIONS.get(env.SESSIONS.idFromName(sessionObjectName(tenant, sessionId)));

/** The session object of `sessionId` in the tenant of the request's agent token. */
export const sessionStub = (c: AppContext, sessionId: string) =>
  tenantSessionStub(c.env, c.var.tenant, sessionId);

export function reply<T>(result: Result<T>, status: 200 | 201 | 202 = 200): Response {
  if (!result.ok) return problem(result.code, result.detail);
  return Response.json(result.value, { status });
}
