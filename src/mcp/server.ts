// The MCP server of one request: the SDK's low-level Server with the session's tools. A new one
// serves each request (stateless transport): everything that lasts lives in the session object.

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { z } from "zod";
import { VERSION } from "../version";
import {
  execCommand,
  type ToolAnswer,
  type ToolContext,
  toolError,
  writeStdin,
} from "./exec-tools";
import {
  EXEC_COMMAND_INPUT,
  execCommandArgs,
  WRITE_STDIN_INPUT,
  writeStdinArgs,
} from "./tool-inputs";

export const SERVER_NAME = "exec-inbox";

const TOOLS = [
  {
    name: "exec_command",
    description:
      "Runs a shell command in this session's workspace on its runner. A command that exits within yield_time_ms answers its exit code and output; one still running answers a session ID to read it with write_stdin, and whether its end will wake you.",
    inputSchema: EXEC_COMMAND_INPUT,
  },
  {
    name: "write_stdin",
    description:
      "Writes chars to a background command of this session (empty: only reads) and answers its new output, or its result once it has finished.",
    inputSchema: WRITE_STDIN_INPUT,
  },
];

/** The call's arguments checked against the tool's schema: a tool error names every issue. */
function parsed<T>(
  schema: z.ZodType<T>,
  raw: unknown,
): { ok: true; args: T } | { ok: false; answer: ToolAnswer } {
  const result = schema.safeParse(raw ?? {});
  if (result.success) return { ok: true, args: result.data };
  const issues = result.error.issues.map(
    (issue) => `${issue.path.join(".") || "(arguments)"}: ${issue.message}`,
  );
  return { ok: false, answer: toolError(`Invalid arguments: ${issues.join("; ")}`) };
}

export function mcpServer(ctx: ToolContext): Server {
  const server = new Server(
    { name: SERVER_NAME, version: VERSION },
    {
      capabilities: { tools: {} },
      // Ajv compiles schemas with `new Function`, which Workers refuse.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: raw } = request.params;
    try {
      if (name === "exec_command") {
        const checked = parsed(execCommandArgs, raw);
        return checked.ok ? await execCommand(ctx, checked.args) : checked.answer;
      }
      if (name === "write_stdin") {
        const checked = parsed(writeStdinArgs, raw);
        return checked.ok ? await writeStdin(ctx, checked.args) : checked.answer;
      }
    } catch (error) {
      // The session object could not serve (it is restarting, or over a limit): retryable.
      console.error(`MCP tool ${name} failed: ${error instanceof Error ? error.name : "error"}`);
      return toolError("The session could not be reached just now; call again.");
    }
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  });
  return server;
}
