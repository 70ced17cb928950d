import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../session-object/mcp-tasks";
import {
  MAX_STORED_ANSWER_BYTES,
  pollIntervalFor,
  resultOf,
  storedAnswer,
  taskOf,
} from "./task-state";

const T0 = 1_700_000_000_000;

const running = {
  handle: "h1",
  command: "make",
  lifetime: "lt",
  status: "running" as const,
  exit_code: null,
  output: "",
  output_truncated: false,
  output_bytes_total: 0,
  output_bytes_total_known: true,
  ended_by: null,
  reserved_at: new Date(T0).toISOString(),
  completed_at: null,
  heartbeat_timeout_ms: null,
  last_heartbeat_at: null,
  progress: null,
  cancel_requested: false,
  full_output: null,
};

const record = (extra: Partial<TaskRecord> = {}): TaskRecord => ({
  taskId: "task_1",
  seq: 1,
  handle: "h1",
  result: null,
  createdAt: T0,
  cancelledAt: null,
  job: running,
  ttlMs: 86_400_000,
  runnerId: "h1",
  ...extra,
});

describe("a task's state, read from its job", () => {
  it("the poll interval is a tenth of the task's age, from 1 s up to 30 s", () => {
    expect([0, 5_000, 60_000, 3_600_000].map(pollIntervalFor)).toEqual([1000, 1000, 6000, 30_000]);
  });

  it("a running job is a working task with its last output as the message", () => {
    const progress = {
      output_tail: "step 2\n",
      output_bytes_total: 7,
      at: new Date(T0 + 5).toISOString(),
    };
    expect(taskOf(record({ job: { ...running, progress } }), T0 + 20_000)).toEqual({
      taskId: "task_1",
      status: "working",
      statusMessage: "step 2",
      createdAt: new Date(T0).toISOString(),
      lastUpdatedAt: new Date(T0 + 5).toISOString(),
      ttl: 86_400_000,
      pollInterval: 2000,
    });
  });

  it("a lost job is a completed task whose result is an error and never a success", () => {
    const lost = {
      ...running,
      status: "lost" as const,
      ended_by: "heartbeat_timeout" as const,
      completed_at: new Date(T0 + 9).toISOString(),
    };
    const task = taskOf(record({ job: lost }), T0 + 10);
    expect(task.status).toBe("completed");
    expect(task.statusMessage).toBe("outcome unknown (heartbeat_timeout)");
    expect(resultOf(record({ job: lost })).isError).toBe(true);
  });

  it("a cancel stands even after the job's result arrives", () => {
    const done = { ...running, status: "completed" as const, exit_code: 0 };
    expect(taskOf(record({ job: done, cancelledAt: T0 + 1 }), T0 + 2).status).toBe("cancelled");
  });
});

describe("an inline answer as a task row keeps it", () => {
  const answer = (output: string) => ({
    content: [{ type: "text" as const, text: `exited with code 0\n${output}` }],
    structuredContent: { exit_code: 0, output, status: "completed" },
    isError: false,
  });

  it("keeps the output once and gives it back in the text and the structured content", () => {
    const stored = storedAnswer(answer("built 12 targets"));
    expect(stored.split("built 12 targets").length - 1).toBe(1);
    const back = resultOf(record({ handle: null, job: null, result: stored, runnerId: null }));
    expect(back).toEqual(answer("built 12 targets"));
  });

  it("cuts a large output head and tail to the cap, under a SQLite row's 2 MB however it escapes", () => {
    const stored = storedAnswer(answer("\u0001".repeat(2 * 1024 * 1024)));
    expect(stored.length).toBeLessThanOrEqual(MAX_STORED_ANSWER_BYTES * 6 + 1024);
    expect(stored.length).toBeLessThan(2_000_000);
    const back = resultOf(record({ handle: null, job: null, result: stored, runnerId: null }));
    expect(back.content[0]?.text).toContain("bytes omitted");
  });

  it("a task holding its own answer is completed with the answer's outcome line as its message", () => {
    const stored = storedAnswer(answer("built 12 targets"));
    const task = taskOf(record({ handle: null, job: null, result: stored, runnerId: null }), T0);
    expect(task.status).toBe("completed");
    expect(task.statusMessage).toBe("exited with code 0");
  });

  it("keeps a tool error without structured content as it is", () => {
    const error = { content: [{ type: "text" as const, text: "no runner" }], isError: true };
    const back = resultOf(
      record({ handle: null, job: null, result: storedAnswer(error), runnerId: null }),
    );
    expect(back).toEqual(error);
  });
});
