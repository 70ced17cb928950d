// Handlers for the service routes (table: routes/service.ts): liveness, the document, and /docs,
// the rendered reference (HTML, not an operation of the document). None needs a token.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { problem } from "../../shared/problem";
import { HEALTH_OBJECT_NAME } from "../domain/tenants";
import { VERSION } from "../version";
import type { AppEnv } from "./context";
import { openApiDocument } from "./openapi";
import { referencePage } from "./reference-page";
import * as routes from "./routes/service";
import { answer, serve } from "./serve";

export function serviceRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.health, () =>
    answer(routes.health, 200, { ok: true, value: { ok: true, version: VERSION } }),
  );

  // One round trip to a Durable Object that does nothing: the floor every session call sits on.
  serve(app, routes.objectHealth, async (c) => {
    const result = await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(HEALTH_OBJECT_NAME)).ping();
    return result.ok
      ? answer(routes.objectHealth, 200, { ok: true, value: { ok: true } })
      : problem(result.code, result.detail);
  });

  // Built on first use: every route is registered by then, and the table never changes after.
  let document: ReturnType<typeof openApiDocument> | undefined;
  serve(app, routes.openApiDocument, () => {
    document ??= openApiDocument(app);
    return Response.json(document);
  });

  app.get("/docs", referencePage);
}
