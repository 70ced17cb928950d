// The OpenAPI 3.1 document, generated from the same zod schemas that validate the requests.
import { z } from "zod";
import {
  ackBody,
  appendMessageBody,
  claimBody,
  completionBody,
  createSessionBody,
  registerRunBody,
  reserveJobBody,
  suspendBody,
} from "../domain/schemas";
import { VERSION } from "../version";

type Operation = {
  summary: string;
  body?: z.ZodType;
  auth: "agent" | "callback" | "operator" | "none";
  ok: string;
};

const OPERATIONS: Record<string, Record<string, Operation>> = {
  "/v1/sessions": {
    post: { summary: "Create a session", body: createSessionBody, auth: "agent", ok: "201" },
  },
  "/v1/sessions/{sid}": {
    get: { summary: "Session view", auth: "agent", ok: "200" },
    delete: { summary: "Delete the session: its lifetime ends", auth: "agent", ok: "204" },
  },
  "/v1/sessions/{sid}/messages": {
    post: { summary: "Append a message", body: appendMessageBody, auth: "agent", ok: "201" },
    get: {
      summary: "A page of messages by index (after, before, limit 1-500)",
      auth: "agent",
      ok: "200",
    },
  },
  "/v1/sessions/{sid}/runs": {
    post: { summary: "Register a run", body: registerRunBody, auth: "agent", ok: "201" },
  },
  "/v1/sessions/{sid}/runs/{run_id}/suspend": {
    post: {
      summary: "Suspend the run waiting for background commands",
      body: suspendBody,
      auth: "agent",
      ok: "200",
    },
  },
  "/v1/sessions/{sid}/runs/{run_id}/finish": {
    post: { summary: "Finish the run", auth: "agent", ok: "200" },
  },
  "/v1/sessions/{sid}/runs/{run_id}/notifications": {
    get: { summary: "Long-poll inbox admissions (after, wait_ms)", auth: "agent", ok: "200" },
  },
  "/v1/sessions/{sid}/exec-jobs": {
    post: {
      summary: "Reserve a job and get its callback",
      body: reserveJobBody,
      auth: "agent",
      ok: "201",
    },
    get: {
      summary: "A page of job summaries, no outputs (status, after, limit 1-500)",
      auth: "agent",
      ok: "200",
    },
  },
  "/v1/sessions/{sid}/exec-jobs/{handle}": {
    get: { summary: "Pull a job (write_stdin)", auth: "agent", ok: "200" },
  },
  "/v1/sessions/{sid}/exec-jobs/{handle}/completion": {
    post: {
      summary: "Report a terminal result",
      body: completionBody,
      auth: "callback",
      ok: "202",
    },
  },
  "/v1/sessions/{sid}/inbox": { get: { summary: "Inbox counts", auth: "agent", ok: "200" } },
  "/v1/sessions/{sid}/inbox/claim": {
    post: { summary: "Claim envelopes with a lease", body: claimBody, auth: "agent", ok: "200" },
  },
  "/v1/sessions/{sid}/inbox/ack": {
    post: { summary: "Acknowledge envelopes", body: ackBody, auth: "agent", ok: "200" },
  },
  "/v1/sessions/{sid}/stats": {
    get: {
      summary: "Rows read and written, database bytes and alarms of this session object",
      auth: "agent",
      ok: "200",
    },
  },
  "/v1/ops/sessions": {
    get: {
      summary: "Sessions that need attention, with counts (status, tenant, limit, cursor)",
      auth: "operator",
      ok: "200",
    },
  },
  "/v1/ops/sessions/{tenant}/{sid}": {
    get: { summary: "One session's view, for an operator", auth: "operator", ok: "200" },
    delete: { summary: "Delete the session", auth: "operator", ok: "204" },
  },
  "/v1/ops/sessions/{tenant}/{sid}/events": {
    get: { summary: "The audit trail, oldest first (after, limit)", auth: "operator", ok: "200" },
  },
  "/v1/ops/sessions/{tenant}/{sid}/exec-jobs": {
    get: { summary: "Job summaries (status, after, limit)", auth: "operator", ok: "200" },
  },
  "/v1/ops/sessions/{tenant}/{sid}/exec-jobs/{handle}": {
    get: { summary: "One job with its output", auth: "operator", ok: "200" },
  },
  "/v1/ops/sessions/{tenant}/{sid}/redeliver": {
    post: { summary: "Redeliver a failed resume (new resume_id)", auth: "operator", ok: "200" },
  },
  "/v1/ops/sessions/{tenant}/{sid}/expire-wait": {
    post: { summary: "Expire the armed wait now", auth: "operator", ok: "200" },
  },
  "/v1/ops/sessions/{tenant}/{sid}/exec-jobs/{handle}/mark-lost": {
    post: { summary: "Give a running job the result lost", auth: "operator", ok: "200" },
  },
  "/healthz": { get: { summary: "Liveness", auth: "none", ok: "200" } },
  "/healthz/object": { get: { summary: "One no-op Durable Object call", auth: "none", ok: "200" } },
  "/openapi.json": { get: { summary: "This document", auth: "none", ok: "200" } },
};

const problemRef = { $ref: "#/components/responses/Problem" };

export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, methods] of Object.entries(OPERATIONS)) {
    paths[path] = {};
    for (const [method, op] of Object.entries(methods)) {
      paths[path][method] = {
        summary: op.summary,
        security: op.auth === "none" ? [] : [{ [`${op.auth}Token`]: [] }],
        ...(op.body === undefined
          ? {}
          : {
              requestBody: {
                required: true,
                content: {
                  "application/json": { schema: z.toJSONSchema(op.body, { io: "input" }) },
                },
              },
            }),
        responses: { [op.ok]: { description: "Success" }, "4XX": problemRef, "5XX": problemRef },
      };
    }
  }
  return {
    openapi: "3.1.0",
    info: { title: "exec-inbox", version: VERSION },
    paths,
    components: {
      securitySchemes: {
        agentToken: { type: "http", scheme: "bearer", description: "One of AGENT_TOKENS" },
        operatorToken: {
          type: "http",
          scheme: "bearer",
          description: "One of OPERATOR_TOKENS",
        },
        callbackToken: {
          type: "http",
          scheme: "bearer",
          description: "The callback token of one job",
        },
      },
      responses: {
        Problem: {
          description: "RFC 9457 problem with a stable code",
          content: {
            "application/problem+json": {
              schema: {
                type: "object",
                required: ["type", "title", "status", "detail", "code"],
                properties: {
                  type: { type: "string" },
                  title: { type: "string" },
                  status: { type: "integer" },
                  detail: { type: "string" },
                  code: { type: "string" },
                },
              },
            },
          },
        },
      },
    },
  };
}
