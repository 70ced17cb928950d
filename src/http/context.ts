// Shared HTTP plumbing: the app's types and the session stubs.
// Rules about sessions are left to the domain behind the stub.
import type { Context } from "hono";
import type { CallbackClaims } from "../auth/callback-token";
import type { Config } from "../domain/config";
import { sessionObjectName } from "../domain/tenants";
import type { Env } from "../env";

/**
 * `tenant` is set by the agent-token check and `callback` by the completion's callback-token
 * check; a route reads only the one its credential sets. `limited` is set by the rate limit on
 * the one request it lets on while limited for the session object to judge (rate-limit.ts).
 */
export type AppEnv = {
  Bindings: Env;
  Variables: { config: Config; tenant: string; callback: CallbackClaims; limited?: boolean };
};
export type AppContext = Context<AppEnv>;

/** The session object of `sessionId` in the given tenant (another tenant's id is another object). */
export const tenantSessionStub = (env: Env, tenant: string, sessionId: string) =>
  env.SESSIONS.get(env.SESSIONS.idFromName(sessionObjectName(tenant, sessionId)));

/** The session object of `sessionId` in the tenant of the request's agent token. */
export const sessionStub = (c: AppContext, sessionId: string) =>
  tenantSessionStub(c.env, c.var.tenant, sessionId);
