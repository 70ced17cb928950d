// The session's MCP endpoint: checks what the SDK's transport would take too loosely (batches,
// protocol versions), finds the session and its runner, and hands one message to a fresh server.

import type { OpenAPIHono } from "@hono/zod-openapi";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { problem } from "../../shared/problem";
import { type AppEnv, sessionStub } from "../http/context";
import { callbackUrl } from "../http/jobs";
import * as routes from "../http/routes/mcp";
import { serve } from "../http/serve";
import { acceptsStreamableHttp, admitted, jsonRpcError, PROTOCOL_VERSIONS } from "./admission";
import { RunnerClient } from "./runner-client";
import { mcpServer, type SessionDoors, TASK_RESULT_WAIT_MS } from "./server";
import { declaresTasksExtension, servedByExtension } from "./tasks-extension";

export { admitted, PROTOCOL_VERSIONS };

/** The bounded wait of tasks/result: MCP_RESULT_WAIT_MS when it is a positive integer. */
const resultWaitMs = (raw: string | undefined): number => {
  const ms = Number(raw);
  return raw !== undefined && Number.isSafeInteger(ms) && ms > 0 ? ms : TASK_RESULT_WAIT_MS;
};

/** What a client is told when the session object could not serve: never its internal text. */
const SESSION_FAULT = "The session could not serve this request just now; try again.";

/**
 * A session-object call whose fault (restarting, over a limit, a broken method) becomes the
 * JSON-RPC internal error with a fixed message: the SDK's server answers -32603 with it, and the
 * extension's fault is caught around it below.
 */
function guarded<F extends (arg: never) => Promise<unknown>>(call: F): F {
  const safe = async (arg: never) => {
    try {
      return await call(arg);
    } catch (fault) {
      console.error(`MCP session call failed: ${fault instanceof Error ? fault.name : "error"}`);
      throw new McpError(ErrorCode.InternalError, SESSION_FAULT);
    }
  };
  // The same parameters and the same answer, or the fixed fault: F's type holds.
  return safe as F;
}

export function mcpRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.mcp, async (c) => {
    const { sid } = c.req.valid("param");
    const checked = admitted(c.req.valid("json"));
    if (!checked.ok) return checked.answer;
    const extended = declaresTasksExtension(checked.message);
    // The extension answers without the transport: its checks come first, as the transport's do.
    if (extended && !acceptsStreamableHttp(c.req.raw.headers)) {
      return jsonRpcError(
        406,
        null,
        -32000,
        "Not Acceptable: Client must accept both application/json and text/event-stream",
      );
    }
    // A notification (no id) gets no answer and runs nothing, whatever it declares.
    if (extended && !("id" in (checked.message as object)))
      return new Response(null, { status: 202 });
    const stub = sessionStub(c, sid);
    const session = await stub.toolContext();
    if (!session.ok) return problem(session.code, session.detail);
    const { runner, willWake } = session.value;
    const door: SessionDoors = {
      reserveJob: guarded<SessionDoors["reserveJob"]>((cmd) => stub.reserveJob(cmd)),
      toolJob: guarded<SessionDoors["toolJob"]>((cmd) => stub.toolJob(cmd)),
      endUntrackedJob: guarded<SessionDoors["endUntrackedJob"]>((cmd) => stub.endUntrackedJob(cmd)),
      createTask: guarded<SessionDoors["createTask"]>((cmd) => stub.createTask(cmd)),
      taskRecord: guarded<SessionDoors["taskRecord"]>((cmd) => stub.taskRecord(cmd)),
      taskRecords: guarded<SessionDoors["taskRecords"]>((cmd) => stub.taskRecords(cmd)),
      cancelTask: guarded<SessionDoors["cancelTask"]>((cmd) => stub.cancelTask(cmd)),
    };
    const context = {
      door,
      sessionId: sid,
      runner: runner === null ? null : new RunnerClient(runner),
      runnerSeq: runner === null ? null : runner.seq,
      willWake,
      callbackUrl: (handle: string, route: "completion" | "heartbeat") =>
        callbackUrl(c, sid, handle, route),
    };
    let extension: Response | null;
    try {
      extension = await servedByExtension(checked.message, c.req.raw.headers, context);
    } catch {
      const id = (checked.message as { id?: unknown }).id;
      return jsonRpcError(200, id, ErrorCode.InternalError, SESSION_FAULT);
    }
    if (extension !== null) return extension;
    const server = mcpServer(context, resultWaitMs(c.env.MCP_RESULT_WAIT_MS));
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
