// Routes for runs: register, suspend, finish and the notifications long-poll.
import type { Hono } from "hono";
import { finishRunBody, notificationsQuery, registerRunBody, suspendBody } from "../domain/schemas";
import { jsonBody, validate } from "./body";
import { type AppEnv, pathIds, reply, sessionStub } from "./context";

export function runRoutes(app: Hono<AppEnv>): void {
  app.post("/v1/sessions/:sid/runs", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    const body = await jsonBody(c, registerRunBody, { optional: true });
    if (!body.ok) return body.response;
    const result = await sessionStub(c, ids.sid).registerRun({
      runId: body.value.run_id ?? null,
      resumeId: body.value.resume_id ?? null,
    });
    return reply(result, 201);
  });

  app.post("/v1/sessions/:sid/runs/:rid/suspend", async (c) => {
    const ids = pathIds(c, "sid", "rid");
    if (ids instanceof Response) return ids;
    const body = await jsonBody(c, suspendBody);
    if (!body.ok) return body.response;
    const result = await sessionStub(c, ids.sid).suspend({
      runId: ids.rid,
      handles: body.value.waiting_for,
      wake: body.value.wake,
      ceilingMs: body.value.ceiling_ms ?? null,
    });
    return reply(result);
  });

  app.post("/v1/sessions/:sid/runs/:rid/finish", async (c) => {
    const ids = pathIds(c, "sid", "rid");
    if (ids instanceof Response) return ids;
    const body = await jsonBody(c, finishRunBody, { optional: true });
    if (!body.ok) return body.response;
    return reply(await sessionStub(c, ids.sid).finish({ runId: ids.rid }));
  });

  app.get("/v1/sessions/:sid/runs/:rid/notifications", async (c) => {
    const ids = pathIds(c, "sid", "rid");
    if (ids instanceof Response) return ids;
    const query = validate(notificationsQuery, c.req.query());
    if (!query.ok) return query.response;
    const result = await sessionStub(c, ids.sid).notifications({
      runId: ids.rid,
      after: query.value.after,
      waitMs: query.value.wait_ms,
    });
    return reply(result);
  });
}
