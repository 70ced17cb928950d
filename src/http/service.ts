// Handlers for the service routes (table: routes/service.ts): the front door, liveness, the
// document, and the pages that are not operations of it (/docs and its script, the favicon).
// None needs a token.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { problem } from "../../shared/problem";
import { HEALTH_OBJECT_NAME } from "../domain/tenants";
import type { Env } from "../env";
import { VERSION } from "../version";
import type { AppEnv } from "./context";
import { FAVICON_PATH, favicon } from "./favicon";
import { frontDoor, frontDoorHtml, frontDoorPolicy, wantsHtml } from "./front-door";
import { openApiDocument } from "./openapi";
import { referencePage, referenceScript } from "./reference-page";
import { SCALAR_SCRIPT_PATH } from "./reference-version";
import * as routes from "./routes/service";
import { answer, serve } from "./serve";

export function serviceRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.frontDoor, async (c) => {
    // The page reports a failing object rather than failing with it.
    const answered = await pingObject(c.env).then(
      (result) => result.ok,
      () => false,
    );
    const door = frontDoor(answered);
    if (!wantsHtml(c.req.header("accept"))) {
      const json = answer(routes.frontDoor, 200, { ok: true, value: door });
      json.headers.set("vary", "accept");
      return json;
    }
    const nonce = crypto.randomUUID();
    return new Response(frontDoorHtml(door, nonce), {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": frontDoorPolicy(nonce),
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "x-frame-options": "DENY",
        vary: "accept",
      },
    });
  });

  serve(app, routes.health, () =>
    answer(routes.health, 200, { ok: true, value: { ok: true, version: VERSION } }),
  );

  // One round trip to a Durable Object that does nothing: the floor every session call sits on.
  serve(app, routes.objectHealth, async (c) => {
    const result = await pingObject(c.env);
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

  app.get("/docs", () => referencePage());
  app.get(SCALAR_SCRIPT_PATH, referenceScript);
  app.get(FAVICON_PATH, favicon);
}

const pingObject = (env: Env) =>
  env.SESSIONS.get(env.SESSIONS.idFromName(HEALTH_OBJECT_NAME)).ping();
