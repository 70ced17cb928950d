// Handlers for one session under /v1/ops/sessions/{tenant}/{sid} (table: routes/ops.ts): view,
// audit trail, jobs, and the actions that mend a stuck agent. OPERATOR_TOKENS is checked in app.ts;
// the rules are the session object's and the domain's.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { problem } from "../../shared/problem";
import { type AppEnv, tenantSessionStub } from "./context";
import * as routes from "./routes/ops";
import { answer, serve } from "./serve";

type Named = { tenant: string; sid: string };
const stubOf = (env: AppEnv["Bindings"], { tenant, sid }: Named) =>
  tenantSessionStub(env, tenant, sid);

export function opsRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.opsGetSession, async (c) => {
    const stub = stubOf(c.env, c.req.valid("param"));
    return answer(routes.opsGetSession, 200, await stub.view());
  });

  serve(app, routes.opsDeleteSession, async (c) => {
    const named = c.req.valid("param");
    // Asked whatever the count says: an operator removes a session made before the count too.
    const result = await stubOf(c.env, named).remove({ by: "operator" });
    return result.ok ? new Response(null, { status: 204 }) : problem(result.code, result.detail);
  });

  serve(app, routes.opsListEvents, async (c) => {
    const stub = stubOf(c.env, c.req.valid("param"));
    return answer(routes.opsListEvents, 200, await stub.events(c.req.valid("query")));
  });

  serve(app, routes.opsListJobs, async (c) => {
    const stub = stubOf(c.env, c.req.valid("param"));
    const query = c.req.valid("query");
    const result = await stub.listJobs({
      status: query.status ?? null,
      after: query.after,
      limit: query.limit,
    });
    return answer(routes.opsListJobs, 200, result);
  });

  serve(app, routes.opsGetJob, async (c) => {
    const params = c.req.valid("param");
    const result = await stubOf(c.env, params).getJob({ handle: params.handle });
    return answer(routes.opsGetJob, 200, result);
  });

  serve(app, routes.opsRedeliver, async (c) => {
    const stub = stubOf(c.env, c.req.valid("param"));
    return answer(routes.opsRedeliver, 200, await stub.redeliver());
  });

  serve(app, routes.opsExpireWait, async (c) => {
    const stub = stubOf(c.env, c.req.valid("param"));
    return answer(routes.opsExpireWait, 200, await stub.expireWaitNow());
  });

  serve(app, routes.opsMarkLost, async (c) => {
    const params = c.req.valid("param");
    const result = await stubOf(c.env, params).markLost({ handle: params.handle });
    return answer(routes.opsMarkLost, 200, result);
  });

  serve(app, routes.opsCancelJob, async (c) => {
    const params = c.req.valid("param");
    const result = await stubOf(c.env, params).operatorCancel({ handle: params.handle });
    return answer(routes.opsCancelJob, 202, result);
  });
}
