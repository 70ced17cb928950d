// Which runner an MCP job is asked of, and the endpoint's bounds: when the runner
// numbers its processes again without a PUT, when a runner is removed and another named in the same
// millisecond, when the REST API reserved the job in the millisecond before a PUT, and when a kit
// reserved it for a runner of its own while the session's runner serves other sessions; and bounds:
// tasks/list over large answers, a callback the runner will not arm, a retried PUT, a failing object.
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SessionObject } from "../../src/session-object/session-object";
import { call, createSession, reserve, stubOf, uniqueId } from "../support/api";
import { callTool, postMcp, rpc, runnerJobs } from "../support/mcp";

const TOKEN = "askable-runner-token";

describe("a runner that hands out the id of a job still running", () => {
  it("write_stdin of a running job whose id the same runner gave a newer command never answers with that command's result", async () => {
    const sid = uniqueId("review2-rerun");
    const handle = "5001";
    // The sandbox behind this URL restarts (its process ids start again) without a PUT: the
    // service still holds 5001 as running, and the new command gets 5001 too.
    await createSession(sid, {
      runner: { url: `http://runner.test/reuse/${handle}`, token: TOKEN },
    });
    const old = await callTool(sid, "exec_command", { cmd: "make release", yield_time_ms: 250 });
    expect(old.structuredContent.session_id).toBe(handle);
    const fresh = await callTool(sid, "exec_command", { cmd: "echo hi", yield_time_ms: 250 });
    expect(fresh.structuredContent.session_id).toBe(`${handle}:2`);
    await fetch(`http://runner.test/_finish/${handle}`, {
      method: "POST",
      body: JSON.stringify({ exit_code: 0, output: "hi (the newer command's output)\n" }),
    });

    // "make release" never finished for the service; the model must not read "echo hi" as its end.
    const poll = await callTool(sid, "write_stdin", { session_id: handle });
    expect(poll.content[0].text).not.toContain("the newer command's output");
    expect(poll.structuredContent.exit_code ?? null).toBeNull();
  });

  it("tasks/cancel of the older task never kills the newer command the runner gave the same id", async () => {
    const sid = uniqueId("review2-rerun-cancel");
    const handle = "5002";
    await createSession(sid, {
      runner: { url: `http://runner.test/reuse/${handle}`, token: TOKEN },
    });
    const created = await rpc(sid, "tools/call", {
      name: "exec_command",
      arguments: { cmd: "make release", yield_time_ms: 250 },
      task: { ttl: 60_000 },
    });
    const taskId = created.body.result.task.taskId;
    const fresh = await callTool(sid, "exec_command", {
      cmd: "deploy --prod",
      yield_time_ms: 250,
    });
    expect(fresh.structuredContent.session_id).toBe(`${handle}:2`);
    await rpc(sid, "tasks/cancel", { taskId });
    // The runner's 5002 is "deploy --prod" now: the fake runner keeps one record per id.
    const [current] = await runnerJobs(sid);
    expect(current.cmd).toBe("deploy --prod");
    expect(current.killed).toBe(false);
  });
});

describe("a job the REST API reserved, its kit's commands on a runner of its own", () => {
  it("write_stdin of its handle never reads or writes the process another session holds under that id on the session's runner", async () => {
    const handle = "9001";
    const a = uniqueId("review2-rest-a");
    const b = uniqueId("review2-rest-b");
    // One runner serves both sessions' MCP tools; it numbers its processes as every runner does.
    const shared = { url: `http://runner.test/reuse/${handle}`, token: TOKEN };
    await createSession(a, { runner: shared });
    await createSession(b, { runner: shared });
    // Session a's kit runs its commands on its own runner and reserves that runner's id 9001.
    await reserve(a, handle, "npm test");
    // On the shared runner, 9001 is session b's command.
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
    expect(poll.content[0].text).not.toContain("b's secret output");
  });
});

describe("which runner started a job, to the millisecond", () => {
  const runnerA = { url: "http://runner.test/a", token: TOKEN };
  const runnerB = { url: "http://runner.test/b", token: "b-token" };
  /** Requests within one millisecond: the object's clock stands still (the pool shares its isolate). */
  const oneMillisecond = () => vi.spyOn(Date, "now").mockReturnValue(Date.now());
  afterEach(() => vi.restoreAllMocks());

  it("a job started by a runner that was removed is never asked of the runner named in the same millisecond after it", async () => {
    const sid = uniqueId("review2-remove-set");
    await createSession(sid, { runner: runnerA });
    const runnerId = await runInDurableObject(
      stubOf(sid) as DurableObjectStub<SessionObject>,
      (instance: SessionObject) => {
        oneMillisecond();
        instance.setRunner({ runner: runnerA });
        const context = instance.toolContext();
        if (!context.ok || context.value.runner === null) throw new Error("no runner");
        const reserved = instance.reserveJob({
          handle: "7001",
          command: "make release",
          startedBy: { runnerSeq: context.value.runner.seq },
        });
        if (!reserved.ok) throw new Error(reserved.detail);
        instance.setRunner({ runner: null });
        instance.setRunner({ runner: runnerB });
        const found = instance.toolJob({ handle: "7001" });
        if (!found.ok) throw new Error(found.detail);
        return found.value.runnerId;
      },
    );
    // Runner B's 7001 is another command, maybe another session's: the job is runner A's.
    expect(runnerId).toBeNull();
  });

  it("a job the REST API reserved before a PUT in the same millisecond is never asked of the new runner", async () => {
    const sid = uniqueId("review2-rest-same-ms");
    await createSession(sid, { runner: runnerA });
    const runnerId = await runInDurableObject(
      stubOf(sid) as DurableObjectStub<SessionObject>,
      (instance: SessionObject) => {
        oneMillisecond();
        const reserved = instance.reserveJob({ handle: "7002", command: "make release" });
        if (!reserved.ok) throw new Error(reserved.detail);
        instance.setRunner({ runner: runnerB });
        const found = instance.toolJob({ handle: "7002" });
        if (!found.ok) throw new Error(found.detail);
        return found.value.runnerId;
      },
    );
    // Reserved while runner A was the session's: runner B never started it.
    expect(runnerId).toBeNull();
  });
});

describe("tasks/list over tasks that hold large answers", () => {
  it("tasks/list pages a dozen tasks whose quick commands printed control characters (terminal colours) at the output cap", async () => {
    const sid = uniqueId("review2-list-heavy");
    // This runner answers every command at once with the largest output, every byte a control
    // character that JSON writes as six (as ANSI colour codes partly are).
    await createSession(sid, {
      runner: { url: "http://runner.test/hostile/escaped", token: TOKEN },
    });
    for (let n = 0; n < 12; n += 1) {
      const created = await rpc(sid, "tools/call", {
        name: "exec_command",
        arguments: { cmd: `make test-${n}` },
        task: { ttl: 60_000 },
      });
      expect(created.body.result.task.status).toBe("completed");
    }
    const list = await rpc(sid, "tasks/list", {});
    // The list carries no results: the tasks' stored answers need not cross to the Worker at all.
    expect(list.body.error, JSON.stringify(list.body).slice(0, 300)).toBeUndefined();
    expect(list.body.result.tasks).toHaveLength(12);
  }, 60_000);
});

describe("a command whose callback the runner would not arm", () => {
  it("a job whose callback could not be armed does not stay running for ever with no runner to report it", async () => {
    const sid = uniqueId("review2-noarm");
    await createSession(sid, { runner: { url: "http://runner.test/noarm", token: TOKEN } });
    const answer = await callTool(sid, "exec_command", { cmd: "make release", yield_time_ms: 250 });
    expect(answer.isError).toBe(true);
    expect(answer.content[0].text).toContain("asked to stop");
    // The command was stopped and nothing will ever post its result: no heartbeat timeout is
    // configured here, so a job left running holds a running-jobs slot and says "running" for ever.
    const jobs = (await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs;
    const stranded = jobs.filter(
      (job: any) => job.status === "running" && job.heartbeat_timeout_ms === null,
    );
    expect(stranded).toEqual([]);
  });
});

describe("a PUT …/runner sent again", () => {
  it("the same runner named again (an idempotent PUT retried) still answers for the commands it runs", async () => {
    const sid = uniqueId("review2-put-again");
    const runner = { url: "http://runner.test", token: TOKEN };
    await createSession(sid, { runner });
    const started = await callTool(sid, "exec_command", {
      cmd: "make release",
      yield_time_ms: 250,
    });
    const handle = started.structuredContent.session_id;
    // A client retries its PUT after a dropped answer: the same URL and the same token.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      expect((await call("PUT", `/v1/sessions/${sid}/runner`, { body: runner })).status).toBe(200);
    }
    const poll = await callTool(sid, "write_stdin", { session_id: handle });
    // Nothing was replaced: the runner that started it is asked, not "replaced".
    expect(poll.content[0].text).not.toContain("replaced");
    expect(poll.structuredContent.runner_answered).toBeUndefined();
  });
});

describe("the tasks extension when the session object fails", () => {
  const EXTENSION = {
    "io.modelcontextprotocol/clientCapabilities": {
      extensions: { "io.modelcontextprotocol/tasks": {} },
    },
  };

  it("tasks/get through the extension while the session object cannot serve is a JSON-RPC error, as the plain path gives, never a 500", async () => {
    const sid = uniqueId("review2-ext-fault");
    await createSession(sid, { runner: { url: "http://runner.test", token: TOKEN } });
    const created = await postMcp(sid, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "exec_command",
        arguments: { cmd: "sleep 100", yield_time_ms: 250 },
        _meta: EXTENSION,
      },
    });
    const taskId = created.body.result.taskId;
    // As an object restarting or over a limit: its method fails (the same stand-in as the first review's).
    await runInDurableObject(stubOf(sid) as DurableObjectStub, (instance: object) => {
      Reflect.set(instance, "taskRecord", undefined);
    });
    const got = await postMcp(
      sid,
      { jsonrpc: "2.0", id: 2, method: "tasks/get", params: { taskId, _meta: EXTENSION } },
      { "mcp-name": taskId },
    );
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.error.code).toBe(-32603);
    // A fixed sentence: nothing of the object's internals (a method it lacks, a stack) is told.
    expect(got.body.error.message).not.toContain("RPC receiver");
    expect(got.body.error.message).not.toContain("taskRecord");
  });
});
