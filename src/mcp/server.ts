// The MCP server of one request: the SDK's low-level Server with the session's tools. A new one
// serves each request (stateless transport): everything that lasts lives in the session object.

import { isTerminal } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { z } from "zod";
import type { Result } from "../domain/errors";
import type { TaskRecord } from "../session-object/mcp-tasks";
import { VERSION } from "../version";
import {
  type Started,
  startCommand,
  type ToolAnswer,
  type ToolContext,
  toolError,
  untrackedTask,
} from "./exec-tools";
import { storedAnswer, taskOf } from "./task-state";
import { SessionTaskStore, type TaskDoor } from "./task-store";
import {
  EXEC_COMMAND_INPUT,
  execCommandArgs,
  WRITE_STDIN_INPUT,
  writeStdinArgs,
} from "./tool-inputs";
import { writeStdin } from "./write-stdin";

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

/**
 * How long tasks/result waits for a working task before it answers -32001 (request timeout), well
 * inside the edge's ~100 s request limit: the client polls tasks/get and asks again.
 */
export const TASK_RESULT_WAIT_MS = 30_000;

export function mcpServer(
  ctx: ToolContext & { door: SessionDoors },
  resultWaitMs: number = TASK_RESULT_WAIT_MS,
): Server {
  const taskStore = new SessionTaskStore(ctx.door, ctx.runner);
  const server = new Server(
    { name: SERVER_NAME, version: VERSION },
    {
      capabilities: {
        tools: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      // The tasks live in the session object: the SDK serves tasks/* over them.
      taskStore,
      // Ajv compiles schemas with `new Function`, which Workers refuse.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  // The SDK's tasks/result waits for a working task without end; this one waits a bounded time.
  server.removeRequestHandler("tasks/result");
  server.setRequestHandler(GetTaskPayloadRequestSchema, (request) =>
    boundedResult(taskStore, request.params.taskId, resultWaitMs),
  );
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
        return asTask ? await taskFor(ctx, started) : started.answer;
      }
      if (name === "write_stdin") {
        const checked = parsed(writeStdinArgs, raw);
        return checked.ok ? await writeStdin(ctx, checked.args) : checked.answer;
      }
    } catch (error) {
      if (error instanceof McpError) throw error;
      // The session object could not serve (it is restarting, or over a limit). A poll is a read,
      // retryable; a command may have been sent, so it is never said to be safe to run again.
      console.error(`MCP tool ${name} failed: ${error instanceof Error ? error.name : "error"}`);
      return toolError(
        name === "write_stdin"
          ? "The session could not be reached just now; call again."
          : "The session could not be reached just now: the command may be running. Do not run it again blindly.",
      );
    }
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  });
  return server;
}

/** The task's result once it ends; past `waitMs` of waiting, -32001 for the client to ask again. */
async function boundedResult(store: SessionTaskStore, taskId: string, waitMs: number) {
  let waited = 0;
  for (;;) {
    const task = await store.getTask(taskId);
    if (task === null) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    if (isTerminal(task.status)) {
      const result = await store.getTaskResult(taskId);
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
    }
    if (waited >= waitMs) {
      throw new McpError(
        ErrorCode.RequestTimeout,
        `Task ${taskId} is still ${task.status}: poll tasks/get and call tasks/result again`,
        { taskId, status: task.status },
      );
    }
    const pause = Math.min(task.pollInterval ?? 1000, waitMs - waited);
    await new Promise((resolve) => setTimeout(resolve, pause));
    waited += pause;
  }
}

/**
 * A task-augmented exec_command's answer, given once the job is reserved: the task follows the
 * job, or holds the answer of a command that needed no job. A task that cannot be stored is the
 * service's fault (-32603): its command is stopped first, since no client will ever read it.
 */
async function taskFor(
  ctx: ToolContext & { door: SessionDoors },
  started: Started,
): Promise<{ task: ReturnType<typeof taskOf> }> {
  let created: Awaited<ReturnType<SessionDoors["createTask"]>> | null = null;
  try {
    created = await ctx.door.createTask(
      started.handle === null
        ? { handle: null, result: storedAnswer(started.answer) }
        : { handle: started.handle, result: null },
    );
  } catch (error) {
    console.error(`MCP createTask failed: ${error instanceof Error ? error.name : "error"}`);
  }
  if (created?.ok) return { task: taskOf(created.value, Date.now()) };
  throw new McpError(ErrorCode.InternalError, await untrackedTask(ctx, started));
}
