// Handlers for runs (table: routes/runs.ts): register, suspend, finish, the notifications long-poll.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { type AppEnv, sessionStub } from "./context";
import * as routes from "./routes/runs";
import { answer, serve } from "./serve";
import { asTenantPoll } from "./tenant-quotas";

export function runRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.registerRun, async (c) => {
    const { sid } = c.req.valid("param");
    const body = c.req.valid("json");
    const result = await sessionStub(c, sid).registerRun({
      runId: body.run_id ?? null,
      resumeId: body.resume_id ?? null,
      ...(c.var.limited === true ? { limited: true } : {}),
    });
    return answer(routes.registerRun, 201, result);
  });

  serve(app, routes.suspendRun, async (c) => {
    const { sid, run_id } = c.req.valid("param");
    const body = c.req.valid("json");
    const result = await sessionStub(c, sid).suspend({
      runId: run_id,
      handles: body.waiting_for,
      wake: body.wake,
      ceilingMs: body.ceiling_ms ?? null,
    });
    return answer(routes.suspendRun, 200, result);
  });

  serve(app, routes.finishRun, async (c) => {
    const { sid, run_id } = c.req.valid("param");
    return answer(routes.finishRun, 200, await sessionStub(c, sid).finish({ runId: run_id }));
  });

  serve(app, routes.runNotifications, async (c) => {
    const { sid, run_id } = c.req.valid("param");
    const query = c.req.valid("query");
    const poll = async () =>
      answer(
        routes.runNotifications,
        200,
        await sessionStub(c, sid).notifications({
          runId: run_id,
          after: query.after,
          waitMs: query.wait_ms,
        }),
      );
    // Only a poll that may wait holds a request open; wait_ms=0 is a plain read.
    return query.wait_ms === 0 ? poll() : asTenantPoll(c, poll);
  });
}
