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
import type { Result } from "../domain/errors";
import type { TaskRecord } from "../session-object/mcp-tasks";
import { VERSION } from "../version";
import {
  startCommand,
  type ToolAnswer,
  type ToolContext,
  toolError,
  writeStdin,
} from "./exec-tools";
import { taskOf } from "./task-state";
import { SessionTaskStore, type TaskDoor } from "./task-store";
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
    execution: { taskSupport: "optional" },
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

/** The session object's methods the tools and tasks call. */
export type SessionDoors = ToolContext["door"] &
  TaskDoor & {
    createTask(cmd: { handle: string | null; result: string | null }): Promise<Result<TaskRecord>>;
  };

export function mcpServer(ctx: ToolContext & { door: SessionDoors }): Server {
  const server = new Server(
    { name: SERVER_NAME, version: VERSION },
    {
      capabilities: {
        tools: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      // The tasks live in the session object: the SDK serves tasks/* over them.
      taskStore: new SessionTaskStore(ctx.door, ctx.runner),
      // Ajv compiles schemas with `new Function`, which Workers refuse.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: raw } = request.params;
    const asTask = request.params.task !== undefined;
    if (asTask && name !== "exec_command") {
      throw new McpError(ErrorCode.InvalidParams, `${name} does not run as a task`);
    }
    try {
      if (name === "exec_command") {
        const checked = parsed(execCommandArgs, raw);
        if (!checked.ok) {
          if (asTask)
            throw new McpError(ErrorCode.InvalidParams, checked.answer.content[0]?.text ?? "");
          return checked.answer;
        }
        const started = await startCommand(ctx, checked.args);
        return asTask ? await taskFor(ctx.door, started) : started.answer;
      }
      if (name === "write_stdin") {
        const checked = parsed(writeStdinArgs, raw);
        return checked.ok ? await writeStdin(ctx, checked.args) : checked.answer;
      }
    } catch (error) {
      if (error instanceof McpError) throw error;
      // The session object could not serve (it is restarting, or over a limit): retryable.
      console.error(`MCP tool ${name} failed: ${error instanceof Error ? error.name : "error"}`);
      return toolError("The session could not be reached just now; call again.");
    }
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  });
  return server;
}

/**
 * A task-augmented exec_command's answer, given once the job is reserved: the task follows the
 * job, or holds the answer of a command that needed no job.
 */
async function taskFor(
  door: SessionDoors,
  started: { answer: ToolAnswer; handle: string | null },
): Promise<{ task: ReturnType<typeof taskOf> }> {
  const created = await door.createTask(
    started.handle === null
      ? { handle: null, result: JSON.stringify(started.answer) }
      : { handle: started.handle, result: null },
  );
  if (!created.ok) throw new McpError(ErrorCode.InternalError, "the task could not be stored");
  return { task: taskOf(created.value, Date.now()) };
}
