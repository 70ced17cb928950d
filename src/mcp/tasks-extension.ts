// The `io.modelcontextprotocol/tasks` extension (2026-07-28) for a request that declares it in its
// per-request client capabilities: the server decides, and a command that goes to the background
// answers a task; `tasks/get` inlines the result, `tasks/cancel` and `tasks/update` acknowledge.
// Requests that do not declare it go on to the SDK's server (the 2025-11-25 tasks).

import type { TaskRecord } from "../session-object/mcp-tasks";
import type { ToolContext } from "./exec-tools";
import { startCommand, toolError, untrackedTask } from "./exec-tools";
import type { SessionDoors } from "./server";
import { resultOf, statusOf, taskOf } from "./task-state";
import { execCommandArgs } from "./tool-inputs";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

/** -32020: the Mcp-Name header does not name the task the body does. */
const HEADER_MISMATCH = -32020;
const INVALID_PARAMS = -32602;

type Message = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;

/** Whether the request declares the extension in `params._meta`'s client capabilities. */
export function declaresTasksExtension(message: unknown): boolean {
  const meta = record(record(record(message)?.params)?._meta);
  const extensions = record(record(meta?.[CLIENT_CAPABILITIES])?.extensions);
  return extensions !== null && record(extensions[TASKS_EXTENSION]) !== null;
}

const answer = (id: unknown, result: Record<string, unknown>, status = 200): Response =>
  Response.json({ jsonrpc: "2.0", id, result }, { status });

const error = (id: unknown, code: number, message: string, status = 200): Response =>
  Response.json({ jsonrpc: "2.0", id: id ?? null, error: { code, message } }, { status });

/** The extension's DetailedTask: the 2025-11-25 task, renamed fields, the result inlined. */
export function detailedTask(task: TaskRecord, now: number): Record<string, unknown> {
  const { ttl, pollInterval, ...shape } = taskOf(task, now);
  return {
    ...shape,
    ttlMs: ttl,
    ...(pollInterval === undefined ? {} : { pollIntervalMs: pollInterval }),
    ...(statusOf(task) === "completed" ? { result: resultOf(task) } : {}),
  };
}

/**
 * The answer to a request that declares the extension, or null when the SDK's server takes it
 * (a tool other than exec_command, initialize, tools/list…).
 */
export async function servedByExtension(
  raw: unknown,
  headers: Headers,
  ctx: ToolContext & { door: SessionDoors },
): Promise<Response | null> {
  if (!declaresTasksExtension(raw)) return null;
  const message = raw as Message;
  const params = record(message.params) ?? {};
  const { id, method } = message;
  if (method === "tools/call" && params.name === "exec_command") {
    const args = execCommandArgs.safeParse(params.arguments ?? {});
    if (!args.success) {
      const issues = args.error.issues.map(
        (issue) => `${issue.path.join(".") || "(arguments)"}: ${issue.message}`,
      );
      return answer(id, {
        resultType: "complete",
        ...toolError(`Invalid arguments: ${issues.join("; ")}`),
      });
    }
    const started = await startCommand(ctx, args.data);
    // Server-directed: only a command that outlives its yield becomes a task.
    if (started.handle === null) return answer(id, { resultType: "complete", ...started.answer });
    let created: Awaited<ReturnType<SessionDoors["createTask"]>> | null = null;
    try {
      created = await ctx.door.createTask({ handle: started.handle, result: null });
    } catch (fault) {
      console.error(`MCP createTask failed: ${fault instanceof Error ? fault.name : "error"}`);
    }
    // The service's fault, never the client's params: the command is stopped first.
    if (!created?.ok) return error(id, -32603, await untrackedTask(ctx, started));
    return answer(id, { resultType: "task", ...detailedTask(created.value, Date.now()) });
  }
  if (method !== "tasks/get" && method !== "tasks/cancel" && method !== "tasks/update") return null;
  const taskId = params.taskId;
  if (typeof taskId !== "string")
    return error(id, INVALID_PARAMS, "params.taskId must be a string");
  // Intermediaries route by this header: a request naming another task is refused.
  if (headers.get("mcp-name") !== taskId) {
    return error(id, HEADER_MISMATCH, "the Mcp-Name header must carry params.taskId", 400);
  }
  const found =
    method === "tasks/cancel"
      ? await cancelled(ctx, taskId)
      : await ctx.door.taskRecord({ taskId });
  if (!found.ok) return error(id, INVALID_PARAMS, "Failed to retrieve task: Task not found");
  return method === "tasks/get"
    ? answer(id, { resultType: "complete", ...detailedTask(found.value, Date.now()) })
    : answer(id, { resultType: "complete" });
}

/**
 * A cancel of a task that already ended changes nothing (the extension's cancel is a request);
 * a working one is cancelled as tasks/cancel of 2025-11-25 is, the runner told at once.
 */
async function cancelled(ctx: ToolContext & { door: SessionDoors }, taskId: string) {
  const found = await ctx.door.taskRecord({ taskId });
  if (!found.ok || statusOf(found.value) !== "working") return found;
  const done = await ctx.door.cancelTask({ taskId });
  // Only the runner that started the job is told: a replaced runner's id may name another command.
  const runnerId = done.ok ? done.value.runnerId : null;
  if (runnerId !== null && ctx.runner !== null) await ctx.runner.kill(runnerId);
  return done;
}
