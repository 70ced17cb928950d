// MCP tasks served from the session object: a task-augmented exec_command answers a task once the
// job is reserved; tasks/get, tasks/result, tasks/list and tasks/cancel read the job as it is.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, complete, createSession, stubOf, uniqueId } from "../support/api";
import { finishOnRunner, rpc, runnerJobs } from "../support/mcp";

const RUNNER = { url: "http://runner.test", token: "task-runner-token" };

async function sessionWithRunner(prefix: string) {
  const sid = uniqueId(prefix);
  await createSession(sid, { runner: RUNNER });
  return sid;
}

/** A task-augmented exec_command: the JSON-RPC result (a CreateTaskResult). */
async function taskCall(sid: string, args: Record<string, unknown>) {
  const answer = await rpc(sid, "tools/call", {
    name: "exec_command",
    arguments: args,
    task: { ttl: 60_000 },
  });
  expect(answer.status).toBe(200);
  return answer.body.result;
}

describe("the task capability", () => {
  it("initialize advertises tasks and tools/list marks exec_command's task support optional", async () => {
    const sid = await sessionWithRunner("task-caps");
    const init = await rpc(sid, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    });
    expect(init.body.result.capabilities.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const tools = (await rpc(sid, "tools/list")).body.result.tools;
    expect(tools[0].execution).toEqual({ taskSupport: "optional" });
    expect(tools[1].execution).toBeUndefined();
  });
});

describe("a task follows its job", () => {
  it("a background command answers a working task whose job the REST API lists, then completes with the stored result", async () => {
    const sid = await sessionWithRunner("task-bg");
    const created = await taskCall(sid, { cmd: "make test" });
    const task = created.task;
    expect(task).toMatchObject({ status: "working", ttl: 86_400_000, statusMessage: "running" });
    expect(task.pollInterval).toBeGreaterThanOrEqual(1000);
    const [job] = await runnerJobs(sid);
    const listed = (await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs;
    expect(listed).toMatchObject([{ command: "make test", status: "running" }]);
    const handle = listed[0].handle;

    await call("POST", `/v1/sessions/${sid}/exec-jobs/${handle}/heartbeat`, {
      token: job.callback.token,
      body: { output_tail: "12 passed\n" },
    });
    const working = (await rpc(sid, "tasks/get", { taskId: task.taskId })).body.result;
    expect(working).toMatchObject({
      taskId: task.taskId,
      status: "working",
      statusMessage: "12 passed",
    });

    await finishOnRunner(handle, { exit_code: 1, output: "" });
    await complete(sid, handle, job.callback.token, {
      status: "completed",
      exit_code: 1,
      output: "1 failed",
    });
    const done = (await rpc(sid, "tasks/get", { taskId: task.taskId })).body.result;
    expect(done).toMatchObject({ status: "completed", statusMessage: "exited with code 1" });
    expect(done.pollInterval).toBeUndefined();
    const result = (await rpc(sid, "tasks/result", { taskId: task.taskId })).body.result;
    expect(result.content).toEqual([{ type: "text", text: "exited with code 1\n1 failed" }]);
    expect(result.isError).toBe(true);
    expect(result._meta["io.modelcontextprotocol/related-task"]).toEqual({ taskId: task.taskId });
  });

  it("a command that ends within its yield is a completed task holding its answer", async () => {
    const sid = await sessionWithRunner("task-quick");
    const { task } = await taskCall(sid, { cmd: "quick:done" });
    expect(task.status).toBe("completed");
    const result = (await rpc(sid, "tasks/result", { taskId: task.taskId })).body.result;
    expect(result.content[0].text).toBe("exited with code 0\ndone");
    expect(result.isError).toBe(false);
    // The row keeps the output once (in the text); the answer gives it back in both places.
    expect(result.structuredContent.output).toBe("done");
    const row = await runInDurableObject(stubOf(sid), (_, state) =>
      state.storage.sql.exec<{ result: string }>("SELECT result FROM mcp_tasks").one(),
    );
    expect(row.result.split("done").length - 1).toBe(1);
  });

  it("tasks/result of a working task answers -32001 (request timeout) after its bounded wait, for the client to ask again", async () => {
    // The test pool's MCP_RESULT_WAIT_MS is 1000 (deployed: 30000).
    const sid = await sessionWithRunner("task-wait");
    const { task } = await taskCall(sid, { cmd: "sleep 1000", yield_time_ms: 250 });
    const answer = await rpc(sid, "tasks/result", { taskId: task.taskId });
    expect(answer.status).toBe(200);
    expect(answer.body.error.code).toBe(-32001);
    expect(answer.body.error.data).toEqual({ taskId: task.taskId, status: "working" });
    expect((await rpc(sid, "tasks/get", { taskId: task.taskId })).body.result.status).toBe(
      "working",
    );
  });

  it("a call without params.task gets the plain answer and makes no task", async () => {
    const sid = await sessionWithRunner("task-plain");
    const plain = await rpc(sid, "tools/call", { name: "exec_command", arguments: { cmd: "x" } });
    expect(plain.body.result.task).toBeUndefined();
    expect(plain.body.result.structuredContent.session_id).toBeDefined();
    expect((await rpc(sid, "tasks/list")).body.result.tasks).toEqual([]);
  });

  it("tasks/list pages the session's tasks in creation order, and they survive the object's restart", async () => {
    const sid = await sessionWithRunner("task-list");
    const first = (await taskCall(sid, { cmd: "one" })).task.taskId;
    const second = (await taskCall(sid, { cmd: "quick:two" })).task.taskId;
    await abortAllDurableObjects();
    const listed = (await rpc(sid, "tasks/list")).body.result;
    expect(listed.tasks.map((task: any) => [task.taskId, task.status])).toEqual([
      [first, "working"],
      [second, "completed"],
    ]);
    expect(listed.nextCursor).toBeUndefined();
    for (const cursor of ["not-a-cursor", "1e3", " 1", "0x1", "01", "-1", "1.0"]) {
      const bad = await rpc(sid, "tasks/list", { cursor });
      expect(bad.body.error?.code, cursor).toBe(-32602);
    }
    expect((await rpc(sid, "tasks/list", { cursor: "1" })).body.result.tasks).toHaveLength(1);
  });
});

describe("tasks/cancel", () => {
  it("cancels the task at once, asks the job to stop, and the job keeps running until the runner says", async () => {
    const sid = await sessionWithRunner("task-cancel");
    const { task } = await taskCall(sid, { cmd: "sleep 1000" });
    const cancelled = await rpc(sid, "tasks/cancel", { taskId: task.taskId });
    expect(cancelled.body.result).toMatchObject({ taskId: task.taskId, status: "cancelled" });
    const [runnerJob] = await runnerJobs(sid);
    expect(runnerJob.killed).toBe(true);
    const job = (await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs[0];
    expect(job).toMatchObject({ status: "running", cancel_requested: true });
    const again = await rpc(sid, "tasks/cancel", { taskId: task.taskId });
    expect(again.body.error.code).toBe(-32602);
    expect((await rpc(sid, "tasks/get", { taskId: task.taskId })).body.result.status).toBe(
      "cancelled",
    );
  });
});

describe("task ids that are not this session's", () => {
  it("an unknown task id, or another session's, is -32602 for get, result and cancel", async () => {
    const mine = await sessionWithRunner("task-mine");
    const theirs = await sessionWithRunner("task-theirs");
    const { task } = await taskCall(theirs, { cmd: "quick:their secret" });
    for (const taskId of [task.taskId, "task_unknown", "", "x".repeat(10_000)]) {
      for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
        const answer = await rpc(mine, method, { taskId });
        expect(answer.status, method).toBe(200);
        expect(answer.body.error.code, method).toBe(-32602);
        expect(JSON.stringify(answer.body)).not.toContain("secret");
      }
    }
  });

  it("write_stdin does not run as a task", async () => {
    const sid = await sessionWithRunner("task-stdin");
    const answer = await rpc(sid, "tools/call", {
      name: "write_stdin",
      arguments: { session_id: "x" },
      task: {},
    });
    expect(answer.body.error.code).toBe(-32602);
  });
});
