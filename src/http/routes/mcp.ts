// Route table, MCP: the session's Model Context Protocol endpoint (Streamable HTTP, JSON answers).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { AUTHENTICATED, LIMITED, problems, WITH_BODY } from "../schemas/problem";
import { AGENT, json, sessionParams } from "./common";

// A batch (an array) passes the schema so that the endpoint refuses it as JSON-RPC does (-32600).
const jsonRpcMessage = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).meta({
  id: "JsonRpcMessage",
  description: "One JSON-RPC 2.0 request or notification of MCP (a batch is refused with -32600).",
});

const jsonRpcAnswer = z
  .record(z.string(), z.unknown())
  .meta({ id: "JsonRpcAnswer", description: "The JSON-RPC 2.0 response: `result` or `error`." });

export const mcp = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/mcp",
  operationId: "mcp",
  tags: ["MCP"],
  summary: "The session's MCP endpoint (Streamable HTTP)",
  description:
    "An MCP server over the Streamable HTTP transport, one JSON answer per request, for protocol versions 2025-11-25 and 2025-06-18. Its tools `exec_command` and `write_stdin` run commands on the session's runner; a background command is the same job the exec-jobs routes list. The client sends `Accept: application/json, text/event-stream`.",
  security: AGENT,
  request: { params: sessionParams, body: { required: true, ...json(jsonRpcMessage) } },
  responses: {
    200: { description: "The JSON-RPC answer", ...json(jsonRpcAnswer) },
    202: { description: "A notification, taken" },
    400: {
      description: "A JSON-RPC error the transport gives (a batch, a bad message)",
      ...json(jsonRpcAnswer),
    },
    406: {
      description: "The Accept header does not take JSON and an event stream",
      ...json(jsonRpcAnswer),
    },
    ...problems(...AUTHENTICATED, ...WITH_BODY, ...LIMITED),
  },
});
