// The session's MCP endpoint: checks what the SDK's transport would take too loosely (batches,
// protocol versions), finds the session and its runner, and hands one message to a fresh server.

import type { OpenAPIHono } from "@hono/zod-openapi";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
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
      reserveJob: (cmd) => stub.reserveJob(cmd),
      toolJob: (cmd) => stub.toolJob(cmd),
      endUntrackedJob: (cmd) => stub.endUntrackedJob(cmd),
      createTask: (cmd) => stub.createTask(cmd),
      taskRecord: (cmd) => stub.taskRecord(cmd),
      taskRecords: (cmd) => stub.taskRecords(cmd),
      cancelTask: (cmd) => stub.cancelTask(cmd),
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
    const extension = await servedByExtension(checked.message, c.req.raw.headers, context);
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
