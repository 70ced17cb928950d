// The SDK's TaskStore over the session object: tasks/get, tasks/result, tasks/list and
// tasks/cancel read and change the task rows there, so they outlive this request, the Worker and
// the client. exec_command creates its tasks itself (after the job is reserved), never through here.

import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import {
  ErrorCode,
  McpError,
  type Result as McpResult,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import type { Result } from "../domain/errors";
import type { TaskRecord } from "../session-object/mcp-tasks";
import type { RunnerClient } from "./runner-client";
import { resultOf, taskOf } from "./task-state";

/** What the tasks need of the session object (its RPC methods, over the stub). */
export interface TaskDoor {
  taskRecord(cmd: { taskId: string }): Promise<Result<TaskRecord>>;
  taskRecords(cmd: {
    afterSeq: number;
    limit: number;
  }): Promise<Result<{ records: TaskRecord[]; nextSeq: number | null }>>;
  cancelTask(cmd: { taskId: string }): Promise<Result<TaskRecord>>;
}

/** Tasks a tasks/list page carries. */
export const TASK_PAGE_SIZE = 20;

const unknownTask = (taskId: string) =>
  new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);

export class SessionTaskStore implements TaskStore {
  constructor(
    private readonly door: TaskDoor,
    private readonly runner: RunnerClient | null,
    private readonly now: () => number = Date.now,
  ) {}

  async createTask(): Promise<Task> {
    throw new McpError(ErrorCode.InternalError, "exec_command creates its own tasks");
  }

  async storeTaskResult(): Promise<void> {
    throw new McpError(ErrorCode.InternalError, "a task's result is its job's");
  }

  async getTask(taskId: string): Promise<Task | null> {
    const found = await this.door.taskRecord({ taskId });
    return found.ok ? taskOf(found.value, this.now()) : null;
  }

  async getTaskResult(taskId: string): Promise<McpResult> {
    const found = await this.door.taskRecord({ taskId });
    if (!found.ok) throw unknownTask(taskId);
    return resultOf(found.value);
  }

  /** Only a cancel comes here (tasks/cancel): the job is asked to stop, the runner told at once. */
  async updateTaskStatus(taskId: string, status: Task["status"]): Promise<void> {
    if (status !== "cancelled") return;
    const cancelled = await this.door.cancelTask({ taskId });
    if (!cancelled.ok) throw unknownTask(taskId);
    const { runnerId, job } = cancelled.value;
    // Best effort: the heartbeat's cancel_requested reaches the runner anyway. A job a replaced
    // runner started is never killed on the new one, where its id may name another command.
    if (runnerId !== null && job?.status === "running" && this.runner !== null) {
      await this.runner.kill(runnerId);
    }
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    // A cursor is the decimal seq this server gave: "1e3", " 7" or "0x10" are not.
    const afterSeq =
      cursor === undefined ? 0 : /^(0|[1-9][0-9]*)$/.test(cursor) ? Number(cursor) : -1;
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) {
      throw new McpError(ErrorCode.InvalidParams, "Invalid cursor");
    }
    const page = await this.door.taskRecords({ afterSeq, limit: TASK_PAGE_SIZE });
    if (!page.ok) throw new McpError(ErrorCode.InvalidParams, page.detail);
    const now = this.now();
    const tasks = page.value.records.map((record) => taskOf(record, now));
    return page.value.nextSeq === null
      ? { tasks }
      : { tasks, nextCursor: String(page.value.nextSeq) };
  }
}
