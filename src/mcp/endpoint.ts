// The session's MCP endpoint: checks what the SDK's transport would take too loosely (batches,
// protocol versions), finds the session and its runner, and hands one message to a fresh server.

import type { OpenAPIHono } from "@hono/zod-openapi";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { problem } from "../../shared/problem";
import { type AppEnv, sessionStub } from "../http/context";
import { callbackUrl } from "../http/jobs";
import * as routes from "../http/routes/mcp";
import { serve } from "../http/serve";
import { RunnerClient } from "./runner-client";
import { mcpServer, type SessionDoors } from "./server";
import { servedByExtension } from "./tasks-extension";

/** The protocol versions served, newest first: a client offering another is answered the newest. */
export const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18"] as const;

const jsonRpcError = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: "2.0", id: null, error: { code, message } }, { status });

/** The message as the server takes it, or the answer that refuses it before any state is read. */
export function admitted(
  message: unknown,
): { ok: true; message: unknown } | { ok: false; answer: Response } {
  // One message per request: a batch would multiply a request's work past every per-request bound.
  if (Array.isArray(message)) {
    return {
      ok: false,
      answer: jsonRpcError(
        400,
        -32600,
        "Invalid Request: batches are not served; send one JSON-RPC message per request",
      ),
    };
  }
  if (typeof message !== "object" || message === null) return { ok: true, message };
  const record = message as Record<string, unknown>;
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

export function mcpRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.mcp, async (c) => {
    const { sid } = c.req.valid("param");
    const checked = admitted(c.req.valid("json"));
    if (!checked.ok) return checked.answer;
    const stub = sessionStub(c, sid);
    const session = await stub.toolContext();
    if (!session.ok) return problem(session.code, session.detail);
    const { runner, willWake } = session.value;
    const door: SessionDoors = {
      reserveJob: (cmd) => stub.reserveJob(cmd),
      getJob: (cmd) => stub.getJob(cmd),
      createTask: (cmd) => stub.createTask(cmd),
      taskRecord: (cmd) => stub.taskRecord(cmd),
      taskRecords: (cmd) => stub.taskRecords(cmd),
      cancelTask: (cmd) => stub.cancelTask(cmd),
    };
    const context = {
      door,
      sessionId: sid,
      runner: runner === null ? null : new RunnerClient(runner),
      willWake,
      callbackUrl: (handle: string, route: "completion" | "heartbeat") =>
        callbackUrl(c, sid, handle, route),
    };
    const extension = await servedByExtension(checked.message, c.req.raw.headers, context);
    if (extension !== null) return extension;
    const server = mcpServer(context);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw, { parsedBody: checked.message });
    } finally {
      await server.close();
    }
  });
}
