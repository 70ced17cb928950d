// Routes for the inbox: counts, claim with a lease, idempotent ack.
import type { Hono } from "hono";
import { ackBody, claimBody } from "../domain/schemas";
import { jsonBody } from "./body";
import { type AppEnv, pathIds, reply, sessionStub } from "./context";

export function inboxRoutes(app: Hono<AppEnv>): void {
  app.get("/v1/sessions/:sid/inbox", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    return reply(await sessionStub(c, ids.sid).inbox());
  });

  app.post("/v1/sessions/:sid/inbox/claim", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    const body = await jsonBody(c, claimBody, { optional: true });
    if (!body.ok) return body.response;
    return reply(
      await sessionStub(c, ids.sid).claim({ max: body.value.max, leaseMs: body.value.lease_ms }),
    );
  });

  app.post("/v1/sessions/:sid/inbox/ack", async (c) => {
    const ids = pathIds(c, "sid");
    if (ids instanceof Response) return ids;
    const body = await jsonBody(c, ackBody);
    if (!body.ok) return body.response;
    return reply(await sessionStub(c, ids.sid).ack({ ids: body.value.ids }));
  });
}
