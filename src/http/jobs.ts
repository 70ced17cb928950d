// Handlers for exec jobs (table: routes/jobs.ts): reservation (agent token), list, the pull, and
// the runner's completion (callback token).
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { problem } from "../../shared/problem";
import { bearerToken } from "../auth/agent-token";
import { checkCallbackToken } from "../auth/callback-token";
import { tokenKind } from "../auth/token-kind";
import { jobPrefix } from "../domain/full-output";
import { utf8Bytes } from "../domain/text";
import { type AppContext, type AppEnv, sessionStub, tenantSessionStub } from "./context";
import { checkFullOutput } from "./full-output-check";
import { refusalDetail } from "./refusals";
import * as routes from "./routes/jobs";
import { answer, serve } from "./serve";
import { mayExist } from "./tenant-quotas";

/** The runner's routes: they take the job's callback token, not an agent token. */
export const CALLBACK_PATH = /^\/v1\/sessions\/[^/]+\/exec-jobs\/[^/]+\/(completion|heartbeat)\/?$/;
/** The runner's part upload (PUT): a callback route whose body may be far past 2 MiB. */
export const PART_PATH = /^\/v1\/sessions\/[^/]+\/exec-jobs\/[^/]+\/output\/parts\/[^/]+\/?$/;

/** Whether a request is the runner's, with a callback token instead of an agent token. */
export const isCallbackRequest = (method: string, path: string): boolean =>
  (method === "POST" && CALLBACK_PATH.test(path)) || (method === "PUT" && PART_PATH.test(path));

/** A job's callback route, under PUBLIC_BASE_URL or else the request's own origin. */
export function callbackUrl(
  c: AppContext,
  sessionId: string,
  handle: string,
  route: string,
): string {
  const base = (c.var.config.publicBaseUrl ?? new URL(c.req.url).origin).replace(/\/+$/, "");
  return `${base}/v1/sessions/${sessionId}/exec-jobs/${handle}/${route}`;
}

/** The callback token is checked before the body is read: a stranger learns nothing from a 422. */
export const callbackToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  const claims = await checkCallbackToken(token ?? "", c.var.config.callbackSecrets);
  // A valid token of another job or session is refused like a forged one; only the detail says so.
  if (
    claims === null ||
    claims.sessionId !== c.req.param("sid") ||
    claims.handle !== c.req.param("handle")
  ) {
    return problem("unauthorized", refusalDetail("completion", tokenKind(token, c.var.config)));
  }
  c.set("callback", claims);
  await next();
};

export function jobRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.reserveJob, async (c) => {
    const { sid } = c.req.valid("param");
    const body = c.req.valid("json");
    const result = await sessionStub(c, sid).reserveJob({
      handle: body.handle,
      command: body.command,
      ...(body.heartbeat_timeout_ms === undefined
        ? {}
        : { heartbeatTimeoutMs: body.heartbeat_timeout_ms }),
    });
    if (!result.ok) return problem(result.code, result.detail);
    const { job, token, created, willWake } = result.value;
    const callback = {
      url: callbackUrl(c, sid, job.handle, "completion"),
      token,
      heartbeat_url: callbackUrl(c, sid, job.handle, "heartbeat"),
      heartbeat_timeout_ms: job.heartbeat_timeout_ms,
    };
    const value = { job, callback, will_wake: willWake };
    return created
      ? answer(routes.reserveJob, 201, { ok: true, value })
      : answer(routes.reserveJob, 200, { ok: true, value });
  });

  serve(app, routes.listJobs, async (c) => {
    const { sid } = c.req.valid("param");
    const query = c.req.valid("query");
    const result = await sessionStub(c, sid).listJobs({
      status: query.status ?? null,
      after: query.after,
      limit: query.limit,
    });
    return answer(routes.listJobs, 200, result);
  });

  serve(app, routes.getJob, async (c) => {
    const { sid, handle } = c.req.valid("param");
    return answer(routes.getJob, 200, await sessionStub(c, sid).getJob({ handle }));
  });

  serve(
    app,
    routes.postCompletion,
    async (c) => {
      const { sid, handle } = c.req.valid("param");
      const claims = c.var.callback;
      const completion = c.req.valid("json");
      const outputBytes = utf8Bytes(completion.output);
      if (outputBytes > c.var.config.maxOutputBytes) {
        return problem(
          "payload_too_large",
          `output is ${outputBytes} bytes; the limit is ${c.var.config.maxOutputBytes}`,
        );
      }
      // The token names the tenant: the same path in another tenant is another session.
      const stub = tenantSessionStub(c.env, claims.tenant, sid);
      const full = completion.full_output;
      if (full !== undefined) {
        if (claims.seq === null) {
          return problem(
            "invalid_request",
            "full_output needs a callback token from a reservation made since revision 2: reserve the job again",
          );
        }
        const prefix = jobPrefix({
          tenant: claims.tenant,
          sessionId: sid,
          lifetime: claims.lifetime,
          handle,
          seq: claims.seq,
        });
        const refused = await checkFullOutput(c.env, prefix, full, c.var.config.maxFullOutputBytes);
        if (refused !== null) {
          // Parts of an ended lifetime or a purged job are gone: the runner must stop, not re-send.
          const fence = await stub.callbackFence({
            lifetime: claims.lifetime,
            handle,
            tokenSeq: claims.seq,
          });
          return fence.ok ? refused : problem(fence.code, fence.detail);
        }
      }
      const result = await stub.complete({
        lifetime: claims.lifetime,
        handle,
        tokenSeq: claims.seq,
        observed: completion.observed,
        result: {
          status: completion.status,
          exitCode: completion.exit_code,
          output: completion.output,
          outputTruncated: completion.output_truncated,
          outputBytesTotal: completion.output_bytes_total ?? outputBytes,
          // Without a total, a cut output's size is not what the command wrote: said as unknown.
          ...(completion.output_bytes_total === undefined && completion.output_truncated
            ? { outputBytesTotalKnown: false }
            : {}),
          endedBy: completion.ended_by ?? null,
          ...(full === undefined ? {} : { fullOutput: full }),
        },
      });
      if (!result.ok) return problem(result.code, result.detail);
      const reply = result.value;
      return reply.outcome === "accepted"
        ? answer(routes.postCompletion, 202, { ok: true, value: reply })
        : answer(routes.postCompletion, 200, { ok: true, value: reply });
    },
    { before: [callbackToken] },
  );

  serve(
    app,
    routes.postHeartbeat,
    async (c) => {
      const { sid, handle } = c.req.valid("param");
      const claims = c.var.callback;
      const body = c.req.valid("json") ?? {};
      const result = await tenantSessionStub(c.env, claims.tenant, sid).heartbeat({
        lifetime: claims.lifetime,
        handle,
        tokenSeq: claims.seq,
        ...(body.output_tail === undefined ? {} : { outputTail: body.output_tail }),
        ...(body.output_bytes_total === undefined
          ? {}
          : { outputBytesTotal: body.output_bytes_total }),
      });
      return answer(routes.postHeartbeat, 200, result);
    },
    { before: [callbackToken] },
  );

  serve(app, routes.cancelJob, async (c) => {
    const { sid, handle } = c.req.valid("param");
    if (!(await mayExist(c, sid))) return problem("not_found", "no such session");
    return answer(routes.cancelJob, 202, await sessionStub(c, sid).cancel({ handle }));
  });
}
