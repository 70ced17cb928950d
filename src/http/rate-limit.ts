// Requests per agent token, through Workers' rate-limiting binding (wrangler.toml
// TOKEN_RATE_LIMITER): what it promises and does not is in docs/tenants.md "Rate limits".
// Which token a request carries is the caller's (app.ts authenticates first).
import type { MiddlewareHandler } from "hono";
import { readCapped } from "../../shared/capped-read";
import { problem } from "../../shared/problem";
import { contentDigest } from "../domain/text";
import type { AppEnv } from "./context";
import { mayExist } from "./tenant-quotas";

/**
 * Requests that drain or end what was accepted are never limited: a claim, an ack, a run's suspend
 * and finish, the pull of a job (its accepted result), a job's cancel and a session's delete always
 * work, so a limited host can still empty its inbox and stop: refusing them would keep the
 * work a flood is made of (pending items, running jobs) alive longer, not end it.
 */
const DRAINS: readonly [string, RegExp][] = [
  ["POST", /^\/v1\/sessions\/[^/]+\/inbox\/(claim|ack)$/],
  ["POST", /^\/v1\/sessions\/[^/]+\/runs\/[^/]+\/(suspend|finish)$/],
  ["GET", /^\/v1\/sessions\/[^/]+\/exec-jobs\/[^/]+$/],
  ["POST", /^\/v1\/sessions\/[^/]+\/exec-jobs\/[^/]+\/cancel$/],
  ["DELETE", /^\/v1\/sessions\/[^/]+$/],
];

export const drains = (method: string, path: string): boolean =>
  DRAINS.some(([drainMethod, pattern]) => drainMethod === method && pattern.test(path));

const REGISTER_RUN = /^\/v1\/sessions\/([^/]+)\/runs$/;
/** A run registration's body is a few ids: one larger than this is refused like any request. */
const RESUME_BODY_BYTES = 16 * 1024;

/** The session a run registration names, or null where the path holds no well-formed one. */
function sessionOf(path: string): string | null {
  const raw = REGISTER_RUN.exec(path)?.[1];
  if (raw === undefined) return null;
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/**
 * True for `POST …/runs` whose JSON body names a `resume_id`. Read from a clone (the handler reads
 * the body itself, with its own checks); malformed or oversized bodies name none.
 */
async function namesResume(method: string, path: string, request: Request): Promise<boolean> {
  if (method !== "POST" || !REGISTER_RUN.test(path) || request.body === null) return false;
  const read = await readCapped(request.clone(), RESUME_BODY_BYTES, (reader) => reader.cancel());
  if (!read.ok) return false;
  try {
    const body: unknown = JSON.parse(new TextDecoder().decode(read.bytes));
    return (
      typeof body === "object" &&
      body !== null &&
      typeof (body as { resume_id?: unknown }).resume_id === "string"
    );
  } catch {
    return false;
  }
}

/**
 * After the agent-token check: counts the request against its token, or answers 429. Past the
 * limit, the host answering its wake still registers its run: a registration naming a
 * `resume_id` goes on marked `limited`, and the session object lets it register only when that
 * is the resume it holds (domain/session.ts `answersWake`), else answers 429 itself. A claim in
 * the body is checked where the truth is, never taken on trust; it costs the object one look at
 * its in-memory core, the same as the refusal it would have answered anyway.
 */
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
    // A session that holds no place cannot be answering a wake: refused here, it starts no object.
    const sid = sessionOf(c.req.path);
    if (
      sid !== null &&
      (await namesResume(c.req.method, c.req.path, c.req.raw)) &&
      (await mayExist(c, sid))
    ) {
      c.set("limited", true);
      return next();
    }
    return problem(
      "rate_limited",
      "this agent token sent more requests than its rate limit allows: retry after Retry-After seconds",
    );
  };
}
