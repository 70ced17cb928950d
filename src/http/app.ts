// The Hono app: body-size guard, configuration, authentication, the route table and error mapping.
import { OpenAPIHono } from "@hono/zod-openapi";
import { MAX_BODY_BYTES, readBodyBytes } from "../../shared/body";
import { problem } from "../../shared/problem";
import { bearerToken, isListedToken, tenantOfToken } from "../auth/agent-token";
import { servesDevSecretsRemotely } from "../auth/dev-secrets";
import { tokenKind } from "../auth/token-kind";
import { consoleRoutes } from "../console/routes";
import { consoleHeaders } from "../console/security-headers";
import { type Config, readConfig } from "../domain/config";
import { mcpRoutes } from "../mcp/endpoint";
import type { AppEnv } from "./context";
import { inboxRoutes } from "./inbox";
import { isCallbackRequest, jobRoutes, PART_PATH } from "./jobs";
import { allowedMethods } from "./methods";
import { describeApi } from "./openapi";
import { opsRoutes } from "./ops";
import { opsIndexRoutes } from "./ops-index";
import { outputRoutes } from "./outputs";
import { limitPerToken } from "./rate-limit";
import { refusalDetail } from "./refusals";
import { runRoutes } from "./runs";
import { serviceRoutes } from "./service";
import { sessionRoutes } from "./sessions";
import { unavailableReason } from "./unavailable";

/**
 * The settings of each env, read once: workerd hands every request of an isolate the same env,
 * whose vars do not change while the isolate lives (a new deployment is a new isolate). An env
 * object seen for the first time (a test's own) is read afresh.
 */
const settings = new WeakMap<object, Config>();
function configOf(env: AppEnv["Bindings"]): Config {
  let config = settings.get(env);
  if (config === undefined) {
    config = readConfig(env);
    settings.set(env, config);
  }
  return config;
}

export function createApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();

  // First, so every answer under /console, whoever makes it, carries the console's headers.
  app.use("*", consoleHeaders);

  // Every route refuses a declared oversized body before anything parses it.
  app.use("*", async (c, next) => {
    // A full output's part streams to R2: its route holds it to its own limit (64 MiB).
    const isPart = c.req.method === "PUT" && PART_PATH.test(c.req.path);
    if (!isPart && Number(c.req.header("content-length") ?? "0") > MAX_BODY_BYTES) {
      const read = await readBodyBytes(c.req.raw);
      return read.ok ? problem("payload_too_large", "request body too large") : read.response;
    }
    const config = configOf(c.env);
    if (config.misconfigured !== null) {
      return problem("internal", `refusing to serve: ${config.misconfigured}`);
    }
    if (servesDevSecretsRemotely(config, new URL(c.req.url).hostname)) {
      return problem("internal", "refusing to serve: the local development secrets are configured");
    }
    c.set("config", config);
    await next();
  });

  app.use("*", allowedMethods(app));

  // The runner's completion and heartbeat carry a callback token instead; their routes check it.
  app.use("/v1/*", async (c, next) => {
    // Repeated headers arrive joined by ", ", and no token contains a comma: two credentials.
    if (c.req.header("authorization")?.includes(",")) {
      return problem("unauthorized", "more than one Authorization credential: send exactly one");
    }
    if (isCallbackRequest(c.req.method, c.req.path)) return next();
    const token = bearerToken(c.req.header("authorization"));
    // Operators and agents hold different tokens: neither opens the other's routes.
    if (c.req.path.startsWith("/v1/ops/")) {
      if (isListedToken(token, c.var.config.operatorTokens)) return next();
      return problem("unauthorized", refusalDetail("operator", tokenKind(token, c.var.config)));
    }
    const tenant = tenantOfToken(token, c.var.config.agentTokens);
    if (tenant === null) {
      return problem("unauthorized", refusalDetail("agent", tokenKind(token, c.var.config)));
    }
    c.set("tenant", tenant);
    return limitPerToken(token ?? "")(c, next);
  });

  serviceRoutes(app);
  sessionRoutes(app);
  runRoutes(app);
  jobRoutes(app);
  outputRoutes(app);
  inboxRoutes(app);
  mcpRoutes(app);
  opsRoutes(app);
  opsIndexRoutes(app);
  consoleRoutes(app);
  describeApi(app);

  app.notFound(() => problem("not_found", "no such route"));
  app.onError(answerThrown);
  return app;
}

/**
 * The answer to an error no handler caught: 503 `unavailable` when a retry can get past it (the
 * storage or the object could not serve), else 500 `internal`.
 */
export function answerThrown(error: Error): Response {
  const unavailable = unavailableReason(error);
  if (unavailable !== null) {
    console.error(`session unavailable: ${unavailable}`);
    return problem("unavailable", `the session cannot be served now (${unavailable}); retry`);
  }
  // Only the error's name: messages can echo request data, and tokens must never reach logs.
  console.error(`unhandled error: ${error.name}`);
  return problem("internal", "internal error");
}
