// Routes for exec jobs: reservation (agent token), the pull, and the runner's completion (callback token).
import type { Hono } from "hono";
import { bearerToken } from "../auth/agent-token";
import { verifyCallbackToken } from "../auth/callback-token";
import { completionBody, jobsQuery, reserveJobBody } from "../domain/schemas";
import { utf8Bytes } from "../domain/text";
import { jsonBody, validate } from "./body";
import {
  type AppContext,
  type AppEnv,
  pathIds,
  reply,
  sessionStub,
  tenantSessionStub,
} from "./context";
import { problem } from "./problem";

export const COMPLETION_PATH = /^\/v1\/sessions\/[^/]+\/exec-jobs\/[^/]+\/completion\/?$/;

function callbackUrl(c: AppContext, sessionId: string, handle: string): string {
  const base = (c.var.config.publicBaseUrl ?? new URL(c.req.url).origin).replace(/\/+$/, "");
  return `${base}/v1/sessions/${sessionId}/exec-jobs/${handle}/completion`;
}

export function jobRoutes(app: Hono<AppEnv>): void {
  app.post("/v1/sessions/:sid/exec-jobs", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    const body = await jsonBody(c, reserveJobBody);
    if (!body.ok) return body.response;
    const result = await sessionStub(c, ids.sid).reserveJob(body.value);
    if (!result.ok) return reply(result);
    const { job, token, created } = result.value;
    return Response.json(
      { job, callback: { url: callbackUrl(c, ids.sid, job.handle), token } },
      { status: created ? 201 : 200 },
    );
  });

  app.get("/v1/sessions/:sid/exec-jobs", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    const query = validate(jobsQuery, c.req.query());
    if (!query.ok) return query.response;
    return reply(
      await sessionStub(c, ids.sid).listJobs({
        status: query.value.status ?? null,
        after: query.value.after,
        limit: query.value.limit,
      }),
    );
  });

  app.get("/v1/sessions/:sid/exec-jobs/:handle", async (c) => {
    const ids = pathIds(c, "sid", "handle");
    if (ids instanceof Response) return ids;
    return reply(await sessionStub(c, ids.sid).getJob({ handle: ids.handle }));
  });

  app.post("/v1/sessions/:sid/exec-jobs/:handle/completion", async (c) => {
    const sessionId = c.req.param("sid");
    const handle = c.req.param("handle");
    const claims = verifyCallbackToken(
      bearerToken(c.req.header("authorization")) ?? "",
      c.var.config.callbackSecrets,
    );
    // A valid token of another job or session is refused exactly like a forged one.
    if (claims === null || claims.sessionId !== sessionId || claims.handle !== handle) {
      return problem("unauthorized", "missing or invalid callback token for this job");
    }
    const body = await jsonBody(c, completionBody);
    if (!body.ok) return body.response;
    const completion = body.value;
    const outputBytes = utf8Bytes(completion.output);
    if (outputBytes > c.var.config.maxOutputBytes) {
      return problem(
        "payload_too_large",
        `output is ${outputBytes} bytes; the limit is ${c.var.config.maxOutputBytes}`,
      );
    }
    // The token names the tenant: the same path in another tenant is another session.
    const result = await tenantSessionStub(c.env, claims.tenant, sessionId).complete({
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
        endedBy: completion.ended_by ?? null,
      },
    });
    if (!result.ok) return reply(result);
    return Response.json(result.value, { status: result.value.outcome === "accepted" ? 202 : 200 });
  });
}
