// The io.modelcontextprotocol/tasks extension (2026-07-28) for clients that declare it per request:
// the server turns a background command into a task, tasks/get inlines its result, and the
// Mcp-Name header must name the task the body names.
import { describe, expect, it } from "vitest";
import { call, complete, createSession, uniqueId } from "../support/api";
import { finishOnRunner, postMcp, runnerJobs } from "../support/mcp";

const DECLARED = {
  "io.modelcontextprotocol/clientCapabilities": {
    extensions: { "io.modelcontextprotocol/tasks": {} },
  },
};

async function sessionWithRunner(prefix: string) {
  const sid = uniqueId(prefix);
  await createSession(sid, { runner: { url: "http://runner.test", token: "ext-token" } });
  return sid;
}

const execCommand = (sid: string, cmd: string, meta: object = DECLARED) =>
  postMcp(sid, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "exec_command", arguments: { cmd }, _meta: meta },
  });

const taskMethod = (sid: string, method: string, taskId: string, name: string | null = taskId) =>
  postMcp(
    sid,
    { jsonrpc: "2.0", id: 2, method, params: { taskId, _meta: DECLARED } },
    name === null ? {} : { "mcp-name": name },
  );

describe("the tasks extension, where a client declares it", () => {
  it("a background command answers a task the server chose, a quick one its plain result", async () => {
    const sid = await sessionWithRunner("ext-create");
    const task = (await execCommand(sid, "sleep 100")).body.result;
    expect(task).toMatchObject({ resultType: "task", status: "working", ttlMs: 86_400_000 });
    expect(task.pollIntervalMs).toBeGreaterThanOrEqual(1000);
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs).toHaveLength(1);
    const quick = (await execCommand(sid, "quick:hi")).body.result;
    expect(quick).toMatchObject({ resultType: "complete", isError: false });
    expect(quick.content[0].text).toBe("exited with code 0\nhi");
  });

  it("tasks/get answers the working task, then the completed one with its result inlined", async () => {
    const sid = await sessionWithRunner("ext-get");
    const { taskId } = (await execCommand(sid, "sleep 5")).body.result;
    const working = await taskMethod(sid, "tasks/get", taskId);
    expect(working.body.result).toMatchObject({
      resultType: "complete",
      taskId,
      status: "working",
    });
    const [job] = await runnerJobs(sid);
    const handle = (await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs[0].handle;
    await finishOnRunner(handle, { exit_code: 0, output: "" });
    await complete(sid, handle, job.callback.token, {
      status: "completed",
      exit_code: 0,
      output: "built",
    });
    const done = (await taskMethod(sid, "tasks/get", taskId)).body.result;
    expect(done).toMatchObject({ resultType: "complete", status: "completed" });
    expect(done.result.content).toEqual([{ type: "text", text: "exited with code 0\nbuilt" }]);
    expect(done.pollIntervalMs).toBeUndefined();
  });

  it("an Mcp-Name header missing or naming another task is 400 with -32020; an unknown task -32602", async () => {
    const sid = await sessionWithRunner("ext-header");
    const { taskId } = (await execCommand(sid, "sleep 5")).body.result;
    for (const name of [null, "task_other"]) {
      const refused = await taskMethod(sid, "tasks/get", taskId, name);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe(-32020);
    }
    const unknown = await taskMethod(sid, "tasks/get", "task_unknown");
    expect(unknown.body.error.code).toBe(-32602);
  });

  it("tasks/cancel acknowledges, the task reads cancelled, and the runner is asked to stop", async () => {
    const sid = await sessionWithRunner("ext-cancel");
    const { taskId } = (await execCommand(sid, "sleep 100")).body.result;
    const ack = await taskMethod(sid, "tasks/cancel", taskId);
    expect(ack.body.result).toEqual({ resultType: "complete" });
    expect((await taskMethod(sid, "tasks/get", taskId)).body.result.status).toBe("cancelled");
    expect((await runnerJobs(sid))[0].killed).toBe(true);
    const job = (await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs[0];
    expect(job).toMatchObject({ status: "running", cancel_requested: true });
    expect((await taskMethod(sid, "tasks/update", taskId)).body.result).toEqual({
      resultType: "complete",
    });
  });

  it("a call declaring the extension without an Accept of JSON and an event stream is 406 and runs nothing", async () => {
    const sid = await sessionWithRunner("ext-accept");
    const answer = await postMcp(
      sid,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "exec_command", arguments: { cmd: "sleep 100" }, _meta: DECLARED },
      },
      { accept: "application/json" },
    );
    expect(answer.status).toBe(406);
    expect(answer.body.error.code).toBe(-32000);
    expect(await runnerJobs(sid)).toEqual([]);
  });

  it("a call that does not declare the extension gets the plain answer, never a task", async () => {
    const sid = await sessionWithRunner("ext-plain");
    const plain = (await execCommand(sid, "sleep 100", {})).body.result;
    expect(plain.resultType).toBeUndefined();
    expect(plain.taskId).toBeUndefined();
    expect(plain.structuredContent.session_id).toBeDefined();
  });
});
