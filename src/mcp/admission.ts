// What the endpoint checks of a message before any state is read or any door serves it: one
// JSON-RPC 2.0 message, an id of the types MCP allows, the params of a known method of the right
// types (-32602, never the SDK's internal error), and the protocol version offered.

import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  InitializeRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";

/** The protocol versions served, newest first: a client offering another is answered the newest. */
export const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18"] as const;

const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

/** The methods whose params the SDK would parse with a zod dump as an internal error. */
const PARAMS: Record<string, z.ZodType> = {
  initialize: InitializeRequestSchema,
  "tools/call": CallToolRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tasks/get": GetTaskRequestSchema,
  "tasks/result": GetTaskPayloadRequestSchema,
  "tasks/list": ListTasksRequestSchema,
  "tasks/cancel": CancelTaskRequestSchema,
};

export const jsonRpcError = (status: number, id: unknown, code: number, message: string) =>
  Response.json({ jsonrpc: "2.0", id: id ?? null, error: { code, message } }, { status });

const refused = (answer: Response) => ({ ok: false as const, answer });

/** An id MCP allows: a string or an integer (never null, a fraction, an object or a list). */
const validId = (id: unknown): boolean =>
  typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));

/** The message as the server takes it, or the answer that refuses it before any state is read. */
export function admitted(
  message: unknown,
): { ok: true; message: unknown } | { ok: false; answer: Response } {
  // One message per request: a batch would multiply a request's work past every per-request bound.
  if (Array.isArray(message)) {
    return refused(
      jsonRpcError(
        400,
        null,
        INVALID_REQUEST,
        "Invalid Request: batches are not served; send one JSON-RPC message per request",
      ),
    );
  }
  if (typeof message !== "object" || message === null) {
    return refused(jsonRpcError(400, null, INVALID_REQUEST, "Invalid Request: not an object"));
  }
  const record = message as Record<string, unknown>;
  if (record.jsonrpc !== "2.0") {
    return refused(
      jsonRpcError(400, null, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"'),
    );
  }
  if ("id" in record && !validId(record.id)) {
    return refused(
      jsonRpcError(
        400,
        null,
        INVALID_REQUEST,
        "Invalid Request: id must be a string or an integer",
      ),
    );
  }
  const isResponse = "id" in record && ("result" in record || "error" in record);
  if (typeof record.method !== "string" && !isResponse) {
    return refused(jsonRpcError(400, record.id, INVALID_REQUEST, "Invalid Request: no method"));
  }
  const schema = typeof record.method === "string" ? PARAMS[record.method] : undefined;
  const checked = schema?.safeParse(record);
  if (checked !== undefined && !checked.success) {
    const issues = checked.error.issues.map(
      (issue) => `${issue.path.join(".") || "(message)"}: ${issue.message}`,
    );
    return refused(
      jsonRpcError(200, record.id, INVALID_PARAMS, `Invalid params: ${issues.join("; ")}`),
    );
  }
  const params = record.params as Record<string, unknown> | undefined;
  if (record.method !== "initialize" || typeof params !== "object" || params === null) {
    return { ok: true, message };
  }
  const offered = params.protocolVersion;
  if ((PROTOCOL_VERSIONS as readonly unknown[]).includes(offered)) return { ok: true, message };
  // The SDK would echo any version it knows; this server answers only the two it speaks.
  return {
    ok: true,
    message: { ...record, params: { ...params, protocolVersion: PROTOCOL_VERSIONS[0] } },
  };
}

/** The transport's own Accept check, for the answers given before it sees the request. */
export const acceptsStreamableHttp = (headers: Headers): boolean => {
  const accept = headers.get("accept") ?? "";
  return accept.includes("application/json") && accept.includes("text/event-stream");
};
