// The OpenAPI 3.1 document: generated from the route table the app serves, plus what the table
// cannot say by itself (security schemes, the resume webhook the service sends).
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import { VERSION } from "../version";
import type { AppEnv } from "./context";
import { methodNotAllowedResponse } from "./schemas/problem";
import { resumePayloadSchema } from "./schemas/resume";

const DESCRIPTION = `Wakes suspended AI agents, exactly once, when their background shell commands finish.
Every error is \`application/problem+json\` (RFC 9457) with a stable \`code\`. A method a documented
path has no operation for answers 405 \`method_not_allowed\` with \`Allow\` (the response
\`MethodNotAllowed\`), before any token is checked; \`OPTIONS\` answers 204 with \`Allow\`. The guide
for users is \`docs/api.md\` in the repository.`;

/** Registers what the routes do not carry; call once, after the routes. */
export function describeApi(app: OpenAPIHono<AppEnv>): void {
  const registry = app.openAPIRegistry;
  registry.registerComponent("securitySchemes", "agentToken", {
    type: "http",
    scheme: "bearer",
    description: "An agent host's token: one of AGENT_TOKENS (`tenant:token` or a bare token)",
  });
  registry.registerComponent("securitySchemes", "operatorToken", {
    type: "http",
    scheme: "bearer",
    description: "An operator's token: one of OPERATOR_TOKENS (only /v1/ops/*)",
  });
  registry.registerComponent("securitySchemes", "callbackToken", {
    type: "http",
    scheme: "bearer",
    description:
      "The callback token of one job, returned by its reservation (only its completion and heartbeat)",
  });
  const { schema, ...response } = methodNotAllowedResponse;
  registry.register("MethodNotAllowedProblem", schema);
  registry.registerComponent("responses", "MethodNotAllowed", {
    ...response,
    content: {
      "application/problem+json": {
        schema: { $ref: "#/components/schemas/MethodNotAllowedProblem" },
      },
    },
  });
  registry.registerWebhook({
    method: "post",
    path: "session.resume",
    operationId: "sessionResume",
    summary: "Resume a session (sent by exec-inbox to the agent host)",
    description:
      "Signed with Standard Webhooks (RESUME_SIGNING_SECRET). Retried with the same resume_id until a 2xx; a 3xx is a failure.",
    request: {
      headers: z.object({
        "webhook-id": z.string().meta({ description: "The resume_id" }),
        "webhook-timestamp": z.string().meta({ description: "Unix seconds" }),
        "webhook-signature": z.string().meta({ description: "v1,<base64 HMAC-SHA256>" }),
      }),
      body: { required: true, content: { "application/json": { schema: resumePayloadSchema } } },
    },
    responses: { 200: { description: "Any 2xx ends the delivery" } },
  });
}

export function openApiDocument(app: OpenAPIHono<AppEnv>) {
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "exec-inbox", version: VERSION, description: DESCRIPTION },
    tags: [
      { name: "Sessions" },
      { name: "Runs" },
      { name: "Exec jobs" },
      { name: "Inbox" },
      { name: "Operators" },
      { name: "Service" },
    ],
  });
}
