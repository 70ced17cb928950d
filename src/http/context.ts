// Shared HTTP plumbing: the app's types, path-id checks, the session stub and Result → Response.
// Rules about sessions are left to the domain behind the stub.
import type { Context } from "hono";
import type { Config } from "../domain/config";
import type { Result } from "../domain/errors";
import { ID_PATTERN } from "../domain/schemas";
import type { Env } from "../env";
import { problem } from "./problem";

export type AppEnv = { Bindings: Env; Variables: { config: Config } };
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

export const sessionStub = (c: AppContext, sessionId: string) =>
  c.env.SESSIONS.get(c.env.SESSIONS.idFromName(sessionId));

export function reply<T>(result: Result<T>, status: 200 | 201 | 202 = 200): Response {
  if (!result.ok) return problem(result.code, result.detail);
  return Response.json(result.value, { status });
}
