// Operator routes under /v1/ops/sessions/{tenant}/{sid}: one session's view, audit trail, jobs, and
// the actions that mend a stuck agent. OPERATOR_TOKENS is checked in app.ts; the rules are the
// session object's and the domain's.
import type { Hono } from "hono";
import { eventsQuery, jobsQuery } from "../domain/schemas";
import { TENANT_PATTERN } from "../domain/tenants";
import { validate } from "./body";
import { type AppContext, type AppEnv, pathIds, reply, tenantSessionStub } from "./context";
import { problem } from "./problem";

const SESSION = "/v1/ops/sessions/:tenant/:sid";

/** The session object named by the path, or a 404 for a tenant or id no session can have. */
function opsStub(c: AppContext) {
  const tenant = c.req.param("tenant") ?? "";
  const ids = pathIds(c, "sid");
  if (ids instanceof Response) return ids;
  if (!TENANT_PATTERN.test(tenant)) return problem("not_found", "no such tenant or session");
  return tenantSessionStub(c.env, tenant, ids.sid);
}

export function opsRoutes(app: Hono<AppEnv>): void {
  app.get(SESSION, async (c) => {
    const stub = opsStub(c);
    if (stub instanceof Response) return stub;
    return reply(await stub.view());
  });

  app.delete(SESSION, async (c) => {
    const stub = opsStub(c);
    if (stub instanceof Response) return stub;
    const result = await stub.remove({ by: "operator" });
    return result.ok ? new Response(null, { status: 204 }) : reply(result);
  });

  app.get(`${SESSION}/events`, async (c) => {
    const stub = opsStub(c);
    if (stub instanceof Response) return stub;
    const query = validate(eventsQuery, c.req.query());
    if (!query.ok) return query.response;
    return reply(await stub.events(query.value));
  });

  app.get(`${SESSION}/exec-jobs`, async (c) => {
    const stub = opsStub(c);
    if (stub instanceof Response) return stub;
    const query = validate(jobsQuery, c.req.query());
    if (!query.ok) return query.response;
    return reply(
      await stub.listJobs({
        status: query.value.status ?? null,
        after: query.value.after,
        limit: query.value.limit,
      }),
    );
  });

  app.get(`${SESSION}/exec-jobs/:handle`, async (c) => {
    const stub = opsStub(c);
    if (stub instanceof Response) return stub;
    const ids = pathIds(c, "handle");
    if (ids instanceof Response) return ids;
    return reply(await stub.getJob({ handle: ids.handle }));
  });

  app.post(`${SESSION}/redeliver`, async (c) => {
    const stub = opsStub(c);
    if (stub instanceof Response) return stub;
    return reply(await stub.redeliver());
  });

  app.post(`${SESSION}/expire-wait`, async (c) => {
    const stub = opsStub(c);
    if (stub instanceof Response) return stub;
    return reply(await stub.expireWaitNow());
  });

  app.post(`${SESSION}/exec-jobs/:handle/mark-lost`, async (c) => {
    const stub = opsStub(c);
    if (stub instanceof Response) return stub;
    const ids = pathIds(c, "handle");
    if (ids instanceof Response) return ids;
    return reply(await stub.markLost({ handle: ids.handle }));
  });
}
