// The session's MCP endpoint: initialize and the tools over raw JSON-RPC, each background command
// the same job the REST API lists, the stored result read back without the runner.
import { describe, expect, it } from "vitest";
import {
  call,
  complete,
  createSession,
  deliveries,
  registerRun,
  suspend,
  uniqueId,
  until,
} from "../support/api";
import { callTool, finishOnRunner, rpc, runnerJobs } from "../support/mcp";

const RUNNER = { url: "http://runner.test", token: "mcp-runner-token" };

async function sessionWithRunner(prefix: string, extra: Record<string, unknown> = {}) {
  const sid = uniqueId(prefix);
  await createSession(sid, { runner: RUNNER, ...extra });
  return sid;
}

describe("the MCP endpoint speaks MCP", () => {
  it("initialize answers exec-inbox with the newest version the client offers that it speaks", async () => {
    const sid = await sessionWithRunner("mcp-init");
    const init = (protocolVersion: string) =>
      rpc(sid, "initialize", {
        protocolVersion,
        capabilities: {},
        clientInfo: { name: "test", version: "1" },
      });
    const newest = await init("2025-11-25");
    expect(newest.status).toBe(200);
    expect(newest.body.result.serverInfo.name).toBe("exec-inbox");
    expect(newest.body.result.protocolVersion).toBe("2025-11-25");
    expect(newest.body.result.capabilities.tools).toEqual({});
    expect((await init("2025-06-18")).body.result.protocolVersion).toBe("2025-06-18");
    expect((await init("2025-03-26")).body.result.protocolVersion).toBe("2025-11-25");
    expect((await init("1999-01-01")).body.result.protocolVersion).toBe("2025-11-25");
  });

  it("tools/list shows exec_command and write_stdin with their input schemas, also without a runner", async () => {
    const sid = uniqueId("mcp-list");
    await createSession(sid);
    const answer = await rpc(sid, "tools/list");
    expect(answer.status).toBe(200);
    const tools = answer.body.result.tools;
    expect(tools.map((tool: any) => tool.name)).toEqual(["exec_command", "write_stdin"]);
    expect(tools[0].inputSchema.required).toEqual(["cmd"]);
    expect(tools[1].inputSchema.required).toEqual(["session_id"]);
  });

  it("GET answers 405, and the endpoint of another tenant's or an unknown session is 404", async () => {
    const sid = await sessionWithRunner("mcp-405");
    const get = await call("GET", `/v1/sessions/${sid}/mcp`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, OPTIONS");
    const other = await rpc(sid, "tools/list", {}, { token: "acme-agent-token" });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe("not_found");
    expect((await rpc(uniqueId("mcp-none"), "tools/list")).status).toBe(404);
    expect((await rpc(sid, "tools/list", {}, { token: null })).status).toBe(401);
  });
});

describe("exec_command", () => {
  it("a command that exits within its yield answers its result and reserves no job", async () => {
    const sid = await sessionWithRunner("mcp-quick");
    const result = await callTool(sid, "exec_command", { cmd: "quick:hello" });
    expect(result).toEqual({
      content: [{ type: "text", text: "exited with code 0\nhello" }],
      structuredContent: { exit_code: 0, output: "hello", status: "completed" },
      isError: false,
    });
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs).toEqual([]);
  });

  it("a background command is reserved and armed before the answer, the same job the REST API lists, and says it will wake", async () => {
    const sid = await sessionWithRunner("mcp-bg");
    const result = await callTool(sid, "exec_command", { cmd: "sleep 100", yield_time_ms: 250 });
    const handle = result.structuredContent.session_id;
    expect(result.structuredContent).toEqual({
      session_id: handle,
      output: "started\n",
      will_wake: true,
    });
    expect(result.content[0].text).toContain(`Process running with session ID ${handle}`);
    expect(result.content[0].text).toContain("You will get a runtime message when it ends");
    const jobs = (await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs;
    expect(jobs).toMatchObject([{ handle, command: "sleep 100", status: "running" }]);
    const [job] = await runnerJobs(sid);
    expect(job.authorization).toBe(`Bearer ${RUNNER.token}`);
    expect(job.callback.url).toBe(
      `http://exec-inbox.test/v1/sessions/${sid}/exec-jobs/${handle}/completion`,
    );
    expect(job.callback.heartbeat_url).toBe(
      `http://exec-inbox.test/v1/sessions/${sid}/exec-jobs/${handle}/heartbeat`,
    );
  });

  it("a session nothing would wake is told so plainly", async () => {
    const sid = uniqueId("mcp-nowake");
    await call("POST", "/v1/sessions", { body: { id: sid, runner: RUNNER } });
    const result = await callTool(sid, "exec_command", { cmd: "sleep 100" });
    expect(result.structuredContent.will_wake).toBe(false);
    expect(result.content[0].text).toContain("Nothing will wake you");
    expect(result.content[0].text).not.toContain("You will get a runtime message when it ends");
  });

  it("a session without a runner answers a tool error saying so, and starts nothing", async () => {
    const sid = uniqueId("mcp-norunner");
    await createSession(sid);
    const result = await callTool(sid, "exec_command", { cmd: "sleep 1" });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toContain("names no runner");
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs).toEqual([]);
  });
});

describe("write_stdin", () => {
  it("a finished job is answered from the stored result, outcome first, with the runner removed", async () => {
    const sid = await sessionWithRunner("mcp-stored");
    const started = await callTool(sid, "exec_command", { cmd: "sleep 5" });
    const handle = started.structuredContent.session_id;
    const callback = await finishOnRunner(handle, { exit_code: 3, output: "from runner" });
    const posted = await complete(sid, handle, callback.token, {
      status: "completed",
      exit_code: 3,
      output: "stored output",
    });
    expect(posted.status).toBe(202);
    await call("PUT", `/v1/sessions/${sid}/runner`, { body: null });
    const result = await callTool(sid, "write_stdin", { session_id: handle });
    expect(result.content[0].text).toBe("exited with code 3\nstored output");
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      session_id: handle,
      status: "completed",
      exit_code: 3,
      output: "stored output",
    });
  });

  it("a killed job never reads as a success", async () => {
    const sid = await sessionWithRunner("mcp-killed");
    const handle = (await callTool(sid, "exec_command", { cmd: "sleep 5" })).structuredContent
      .session_id;
    const callback = await finishOnRunner(handle, { exit_code: null, output: "" });
    await complete(sid, handle, callback.token, {
      status: "killed",
      exit_code: null,
      output: "partial",
      ended_by: "kill_request",
    });
    const result = await callTool(sid, "write_stdin", { session_id: handle });
    expect(result.content[0].text.split("\n")[0]).toBe("killed (kill_request)");
    expect(result.isError).toBe(true);
  });

  it("a killed job the runner sent with exit code 0 shows the model no exit code", async () => {
    const sid = await sessionWithRunner("mcp-killed-zero");
    const handle = (await callTool(sid, "exec_command", { cmd: "sleep 5" })).structuredContent
      .session_id;
    const callback = await finishOnRunner(handle, { exit_code: null, output: "" });
    await complete(sid, handle, callback.token, {
      status: "killed",
      exit_code: 0,
      output: "partial",
      ended_by: "runner_timeout",
    });
    const result = await callTool(sid, "write_stdin", { session_id: handle });
    expect(result.content[0].text.split("\n")[0]).toBe("killed (runner_timeout)");
    expect(result.structuredContent).toMatchObject({ status: "killed", exit_code: null });
    expect(result.isError).toBe(true);
  });

  it("a running job is polled on the runner", async () => {
    const sid = await sessionWithRunner("mcp-poll");
    const handle = (await callTool(sid, "exec_command", { cmd: "sleep 5" })).structuredContent
      .session_id;
    const result = await callTool(sid, "write_stdin", { session_id: handle });
    expect(result.structuredContent).toEqual({ session_id: handle, status: "running", output: "" });
  });

  it("a running job whose runner does not answer gets its last progress and a plain sentence", async () => {
    // The runner started the job through the endpoint, so it is asked, and answers garbage.
    const sid = await sessionWithRunner("mcp-silent", {
      runner: { url: "http://runner.test/mute", token: "t" },
    });
    const started = await callTool(sid, "exec_command", { cmd: "sleep 5", yield_time_ms: 250 });
    const handle = started.structuredContent.session_id;
    const [armed] = await runnerJobs(sid);
    const beat = await call("POST", `/v1/sessions/${sid}/exec-jobs/${handle}/heartbeat`, {
      token: armed.callback.token,
      body: { output_tail: "step 3 of 9\n", output_bytes_total: 120 },
    });
    expect(beat.status).toBe(200);
    const result = await callTool(sid, "write_stdin", { session_id: handle });
    expect(result.isError).toBeUndefined();
    expect(result.content[0].text).toContain("the runner's answer could not be read");
    expect(result.content[0].text).toContain("step 3 of 9");
    expect(result.structuredContent).toEqual({
      session_id: handle,
      status: "running",
      output: "step 3 of 9\n",
      runner_answered: false,
    });
  });

  it("a running job whose runner was replaced gets its last progress and says so, the new runner never asked", async () => {
    const sid = await sessionWithRunner("mcp-replaced");
    const handle = (await callTool(sid, "exec_command", { cmd: "sleep 5" })).structuredContent
      .session_id;
    const [job] = await runnerJobs(sid);
    const beat = await call("POST", `/v1/sessions/${sid}/exec-jobs/${handle}/heartbeat`, {
      token: job.callback.token,
      body: { output_tail: "step 3 of 9\n", output_bytes_total: 120 },
    });
    expect(beat.status).toBe(200);
    // Garbage from the new runner would say "could not be read": it is not asked at all.
    await call("PUT", `/v1/sessions/${sid}/runner`, {
      body: { url: "http://runner.test/hostile/garbage", token: "t" },
    });
    const result = await callTool(sid, "write_stdin", { session_id: handle });
    expect(result.isError).toBeUndefined();
    expect(result.content[0].text).toContain("the runner that started it was replaced");
    expect(result.content[0].text).not.toContain("could not be read");
    expect(result.content[0].text).toContain("step 3 of 9");
  });

  it("another session's handle is a tool error and never its output", async () => {
    const mine = await sessionWithRunner("mcp-mine");
    const theirs = await sessionWithRunner("mcp-theirs");
    const handle = (await callTool(theirs, "exec_command", { cmd: "sleep 5" })).structuredContent
      .session_id;
    const callback = await finishOnRunner(handle, { exit_code: 0, output: "secret" });
    await complete(theirs, handle, callback.token, {
      status: "completed",
      exit_code: 0,
      output: "their secret output",
    });
    const result = await callTool(mine, "write_stdin", { session_id: handle });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toBe(
      `No command with session ID ${handle} belongs to this session.`,
    );
    expect(JSON.stringify(result)).not.toContain("secret");
  });
});

describe("one state, every door", () => {
  it("a session suspended on an MCP-started command is woken once by its result, as by any other", async () => {
    const sid = await sessionWithRunner("mcp-wake");
    const handle = (await callTool(sid, "exec_command", { cmd: "sleep 5" })).structuredContent
      .session_id;
    const runId = await registerRun(sid);
    expect((await suspend(sid, runId, [handle])).status).toBe(200);
    const [job] = await runnerJobs(sid);
    const posted = await complete(sid, handle, job.callback.token, {
      status: "completed",
      exit_code: 0,
      output: "done",
    });
    expect(posted.body).toMatchObject({ outcome: "accepted", disposition: "resume_scheduled" });
    await until(async () => {
      const sent = await deliveries(sid);
      expect(sent).toHaveLength(1);
      expect(JSON.parse(sent[0]?.body ?? "{}")).toMatchObject({
        session_id: sid,
        reason: "background_exec_completed",
      });
    });
    const events = await call("GET", `/v1/ops/sessions/default/${sid}/events`, {
      token: "test-operator-token",
    });
    expect(events.body.events.map((event: any) => event.type)).toContain("completion");
  });
});
