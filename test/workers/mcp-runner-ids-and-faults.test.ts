// The MCP endpoint where runner ids and faults could mislead: a runner id the session already
// holds (a replaced sandbox numbers again) gets a handle of its own, a replaced runner is never
// asked about the jobs of the one before, a notification through the tasks extension runs nothing,
// a running job's task outlives a day, a fault of the session object after the command started
// stops it and is the service's error, params of the wrong type are -32602.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, complete, createSession, stubOf, uniqueId, until } from "../support/api";
import { callTool, postMcp, rpc, runnerJobs } from "../support/mcp";

const TOKEN = "review-runner-token";

const jobsOf = async (sid: string): Promise<any[]> =>
  (await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs;

/** A background command of `sid` on a runner that names every command `handle`, ended by `exit`. */
async function finishedOnReusingRunner(sid: string, handle: string, cmd: string, exit: number) {
  const first = await callTool(sid, "exec_command", { cmd, yield_time_ms: 250 });
  expect(first.structuredContent.session_id).toBe(handle);
  const [job] = await runnerJobs(sid);
  const done = await complete(sid, handle, job.callback.token, {
    status: "completed",
    exit_code: exit,
    output: "old failure: 3 tests failed\n",
  });
  expect(done.status).toBe(202);
}

describe("a runner that names a session ID a job of this session already holds", () => {
  it("a command whose runner ID a finished job holds is never promised as running nor answered with the old result", async () => {
    const sid = uniqueId("review-reuse");
    const handle = "1001";
    await createSession(sid, {
      runner: { url: `http://runner.test/reuse/${handle}`, token: TOKEN },
    });
    await finishedOnReusingRunner(sid, handle, "npm test", 1);

    // The sandbox was replaced: its process ids start again, and the same command gets 1001.
    const second = await callTool(sid, "exec_command", { cmd: "npm test", yield_time_ms: 250 });
    // The model must not be told a new command runs under the ID that reads the old result: the
    // new job gets a handle of its own, and that handle reads the new command.
    const told = second.structuredContent.session_id;
    expect(told).not.toBe(handle);
    expect(second.content[0].text).toContain(`Process running with session ID ${told}`);
    const poll = await callTool(sid, "write_stdin", { session_id: told });
    expect(poll.content[0].text).not.toContain("old failure");
    expect(poll.structuredContent.status).toBe("running");
  });

  it("a task-augmented call whose runner ID a finished job holds never completes with that job's result", async () => {
    const sid = uniqueId("review-reuse-task");
    const handle = "1001";
    await createSession(sid, {
      runner: { url: `http://runner.test/reuse/${handle}`, token: TOKEN },
    });
    await finishedOnReusingRunner(sid, handle, "npm test", 1);

    const created = await rpc(sid, "tools/call", {
      name: "exec_command",
      arguments: { cmd: "npm test", yield_time_ms: 250 },
      task: { ttl: 60_000 },
    });
    const taskId = created.body.result.task.taskId;
    const result = await rpc(sid, "tasks/result", { taskId });
    expect(JSON.stringify(result.body)).not.toContain("old failure");
  });

  it("after the runner is replaced, a new command whose ID an earlier job of the session holds is tracked, not stopped", async () => {
    const sid = uniqueId("review-replaced");
    const handle = "1001";
    await createSession(sid, {
      runner: { url: `http://runner.test/reuse/${handle}`, token: TOKEN },
    });
    await finishedOnReusingRunner(sid, handle, "npm test", 0);
    // A new sandbox (PUT …/runner) starts its ids again: its first command is 1001 too.
    const put = await call("PUT", `/v1/sessions/${sid}/runner`, {
      body: { url: `http://runner.test/reuse/${handle}`, token: "new-sandbox-token" },
    });
    expect(put.status).toBe(200);
    const next = await callTool(sid, "exec_command", { cmd: "npm run build", yield_time_ms: 250 });
    expect(next.isError, next.content[0].text).not.toBe(true);
    expect(await jobsOf(sid)).toHaveLength(2);
  });
});

describe("a notification through the tasks extension", () => {
  it("a tools/call without an id (a notification) that declares the tasks extension runs nothing and stores nothing", async () => {
    const sid = uniqueId("review-ext-notify");
    await createSession(sid, { runner: { url: "http://runner.test", token: TOKEN } });
    const answer = await postMcp(sid, {
      jsonrpc: "2.0",
      method: "tools/call",
      params: {
        name: "exec_command",
        arguments: { cmd: "sleep 100", yield_time_ms: 250 },
        _meta: {
          "io.modelcontextprotocol/clientCapabilities": {
            extensions: { "io.modelcontextprotocol/tasks": {} },
          },
        },
      },
    });
    // As the plain path answers a notification: 202, nothing run.
    expect(answer.status).toBe(202);
    expect(await runnerJobs(sid)).toEqual([]);
    expect(await jobsOf(sid)).toEqual([]);
  });
});

describe("a handle forwarded to a runner that does not hold it", () => {
  it("after the runner is replaced by one another session uses, write_stdin and tasks/cancel of an old running job never reach that session's process", async () => {
    const handle = "2001";
    const a = uniqueId("review-shared-a");
    const b = uniqueId("review-shared-b");
    // Session a's command runs in its first sandbox as 2001, and is still running for the service.
    await createSession(a, { runner: { url: `http://runner.test/reuse/${handle}`, token: TOKEN } });
    const created = await rpc(a, "tools/call", {
      name: "exec_command",
      arguments: { cmd: "sleep 1000", yield_time_ms: 250 },
      task: { ttl: 60_000 },
    });
    const taskId = created.body.result.task.taskId;
    // That sandbox is replaced by a runner session b uses too, where 2001 is b's command.
    const shared = { url: `http://runner.test/reuse/${handle}`, token: "shared-runner-token" };
    await createSession(b, { runner: shared });
    expect((await call("PUT", `/v1/sessions/${a}/runner`, { body: shared })).status).toBe(200);
    const started = await callTool(b, "exec_command", {
      cmd: "print-b-secrets",
      yield_time_ms: 250,
    });
    expect(started.structuredContent.session_id).toBe(handle);
    await fetch(`http://runner.test/_finish/${handle}`, {
      method: "POST",
      body: JSON.stringify({ exit_code: 0, output: "b's secret output\n" }),
    });

    const poll = await callTool(a, "write_stdin", { session_id: handle, chars: "rm -rf .\n" });
    expect.soft(poll.content[0].text).not.toContain("b's secret output");
    await rpc(a, "tasks/cancel", { taskId });
    const [bJob] = await runnerJobs(b);
    expect.soft(bJob.killed).toBe(false);
  });
});

describe("a task lasts as long as its job", () => {
  it("the task of a command still running a day after it started stays readable when the next task is made", async () => {
    const sid = uniqueId("review-task-ttl");
    await createSession(sid, { runner: { url: "http://runner.test", token: TOKEN } });
    const long = await rpc(sid, "tools/call", {
      name: "exec_command",
      arguments: { cmd: "make world", yield_time_ms: 250 },
      task: { ttl: 60_000 },
    });
    const taskId = long.body.result.task.taskId;
    // A day and an hour pass for the task and its job (JOB_RETENTION_MS is a day); it still runs.
    const dayAndHour = 25 * 60 * 60 * 1000;
    await runInDurableObject(stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE mcp_tasks SET created_at = created_at - ?", dayAndHour);
      state.storage.sql.exec("UPDATE jobs SET reserved_at = reserved_at - ?", dayAndHour);
    });
    expect((await jobsOf(sid))[0].status).toBe("running");
    await rpc(sid, "tools/call", {
      name: "exec_command",
      arguments: { cmd: "quick:next" },
      task: { ttl: 60_000 },
    });
    const got = await rpc(sid, "tasks/get", { taskId });
    expect(got.body.error, JSON.stringify(got.body)).toBeUndefined();
    expect(got.body.result.status).toBe("working");
  });
});

describe("a purged job takes its MCP rows with it", () => {
  it("a finished MCP job purged by retention leaves no task and no runner record behind", async () => {
    const sid = uniqueId("review-purge");
    const handle = "3001";
    await createSession(sid, {
      runner: { url: `http://runner.test/reuse/${handle}`, token: TOKEN },
    });
    const created = await rpc(sid, "tools/call", {
      name: "exec_command",
      arguments: { cmd: "npm test", yield_time_ms: 250 },
      task: { ttl: 60_000 },
    });
    const taskId = created.body.result.task.taskId;
    const [job] = await runnerJobs(sid);
    await complete(sid, handle, job.callback.token, {
      status: "completed",
      exit_code: 0,
      output: "",
    });
    const rows = () =>
      runInDurableObject(stubOf(sid), (_, state) => [
        state.storage.sql.exec("SELECT handle FROM mcp_jobs").toArray().length,
        state.storage.sql.exec("SELECT task_id FROM mcp_tasks").toArray().length,
      ]);
    expect(await rows()).toEqual([1, 1]);
    // A retention period passes for the finished job; the restarted object's alarm purges it.
    await runInDurableObject(stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE jobs SET completed_at = ?", Date.now() - 25 * 60 * 60 * 1000);
    });
    await abortAllDurableObjects();
    await until(async () => expect(await rows()).toEqual([0, 0]));
    expect((await rpc(sid, "tasks/get", { taskId })).body.error.code).toBe(-32602);
  });
});

describe("a session object that fails after the command started", () => {
  /** Makes the session object's `method` fail, as an object restarting or over a limit does. */
  const failing = (sid: string, method: string): Promise<void> =>
    runInDurableObject(stubOf(sid) as DurableObjectStub, (instance: object) => {
      Reflect.set(instance, method, undefined);
    });

  it("a task-augmented exec_command whose task cannot be stored is not answered as the client's invalid params while its command runs on", async () => {
    const sid = uniqueId("review-task-fault");
    await createSession(sid, { runner: { url: "http://runner.test", token: TOKEN } });
    await failing(sid, "createTask");
    const answer = await rpc(sid, "tools/call", {
      name: "exec_command",
      arguments: { cmd: "deploy --prod", yield_time_ms: 250 },
      task: { ttl: 60_000 },
    });
    // The job is reserved and armed: the fault is the service's, never the client's params.
    expect(answer.body.error?.code, JSON.stringify(answer.body)).not.toBe(-32602);
    expect(answer.body.error.code).toBe(-32603);
    // No client will ever read the task: its command is stopped, and the answer says so.
    expect(answer.body.error.message).toContain("was stopped");
    const [job] = await runnerJobs(sid);
    expect(job.killed).toBe(true);
  });

  it("a call through the tasks extension whose task cannot be stored is -32603 and its command stopped", async () => {
    const sid = uniqueId("review-ext-fault");
    await createSession(sid, { runner: { url: "http://runner.test", token: TOKEN } });
    await failing(sid, "createTask");
    const answer = await postMcp(sid, {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        name: "exec_command",
        arguments: { cmd: "deploy --prod", yield_time_ms: 250 },
        _meta: {
          "io.modelcontextprotocol/clientCapabilities": {
            extensions: { "io.modelcontextprotocol/tasks": {} },
          },
        },
      },
    });
    expect(answer.body.error.code, JSON.stringify(answer.body)).toBe(-32603);
    expect(answer.body.error.message).toContain("was stopped");
    const [job] = await runnerJobs(sid);
    expect(job.killed).toBe(true);
  });

  it("an exec_command whose job cannot be reserved never tells the model to call again while its command runs on", async () => {
    const sid = uniqueId("review-reserve-fault");
    await createSession(sid, { runner: { url: "http://runner.test", token: TOKEN } });
    await failing(sid, "reserveJob");
    const result = await callTool(sid, "exec_command", {
      cmd: "deploy --prod",
      yield_time_ms: 250,
    });
    const [job] = await runnerJobs(sid);
    // Called again, the model would start the command a second time beside the untracked one.
    expect({
      saysCallAgain: result.content[0].text.includes("call again"),
      killed: job.killed,
    }).not.toEqual({
      saysCallAgain: true,
      killed: false,
    });
  });
});

describe("params of the wrong type", () => {
  it("a taskId or a tool name that is not a string is -32602 (invalid params), not an internal error", async () => {
    const sid = uniqueId("review-param-types");
    await createSession(sid, { runner: { url: "http://runner.test", token: TOKEN } });
    const task = await rpc(sid, "tasks/get", { taskId: 5 });
    expect(task.body.error.code, JSON.stringify(task.body)).toBe(-32602);
    const tool = await rpc(sid, "tools/call", { name: 5, arguments: {} });
    expect(tool.body.error.code, JSON.stringify(tool.body)).toBe(-32602);
  });
});
