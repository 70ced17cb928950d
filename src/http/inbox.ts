// Handlers for the inbox (table: routes/inbox.ts): counts, claim with a lease, idempotent ack.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { type AppEnv, sessionStub } from "./context";
import * as routes from "./routes/inbox";
import { answer, serve } from "./serve";

export function inboxRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.getInbox, async (c) => {
    const { sid } = c.req.valid("param");
    return answer(routes.getInbox, 200, await sessionStub(c, sid).inbox());
  });

  serve(app, routes.claimInbox, async (c) => {
    const { sid } = c.req.valid("param");
    const { max, lease_ms } = c.req.valid("json");
    const result = await sessionStub(c, sid).claim({ max, leaseMs: lease_ms });
    return answer(routes.claimInbox, 200, result);
  });

  serve(app, routes.ackInbox, async (c) => {
    const { sid } = c.req.valid("param");
    const { ids } = c.req.valid("json");
    return answer(routes.ackInbox, 200, await sessionStub(c, sid).ack({ ids }));
  });
}
