// Requests per agent token, through Workers' rate-limiting binding (wrangler.toml
// TOKEN_RATE_LIMITER): what it promises and does not is in docs/tenants.md "Rate limits".
// Which token a request carries is the caller's (app.ts authenticates first).
import type { MiddlewareHandler } from "hono";
import { problem } from "../../shared/problem";
import { contentDigest } from "../domain/text";
import type { AppEnv } from "./context";

/**
 * Requests that drain or end what was accepted are never limited: a claim, an ack, a run's finish,
 * a job's cancel and a session's delete always work, so a limited host can still empty its inbox
 * and stop.
 */
const DRAINS: readonly [string, RegExp][] = [
  ["POST", /^\/v1\/sessions\/[^/]+\/inbox\/(claim|ack)$/],
  ["POST", /^\/v1\/sessions\/[^/]+\/runs\/[^/]+\/finish$/],
  ["POST", /^\/v1\/sessions\/[^/]+\/exec-jobs\/[^/]+\/cancel$/],
  ["DELETE", /^\/v1\/sessions\/[^/]+$/],
];

export const drains = (method: string, path: string): boolean =>
  DRAINS.some(([drainMethod, pattern]) => drainMethod === method && pattern.test(path));

/** After the agent-token check: counts the request against its token, or answers 429. */
export function limitPerToken(token: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const limiter = c.env.TOKEN_RATE_LIMITER;
    // Undefined where a stack binds no limiter (the benchmarks' Miniflare): nothing to count with.
    if (limiter === undefined || drains(c.req.method, c.req.path)) return next();
    if (c.var.config.tenants[c.var.tenant]?.rateLimited === false) return next();
    // A digest, not the token: the key leaves the Worker for the limiter's counters.
    const { success } = await limiter.limit({
      key: `agent:${c.var.tenant}:${contentDigest(token)}`,
    });
    if (success) return next();
    return problem(
      "rate_limited",
      "this agent token sent more requests than its rate limit allows: retry after Retry-After seconds",
    );
  };
}
