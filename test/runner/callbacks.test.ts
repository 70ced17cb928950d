import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runner } from "../../runner/src/runner";
import { agentClient, startWranglerDev, type WranglerDev, waitFor } from "../support/local-stack";
import { killAllRunners } from "./runner-process";
import { runnerCall, startFlakyProxy, startRunnerProcess } from "./support";

describe("runner callbacks against the real exec-inbox (wrangler dev)", () => {
  const root = mkdtempSync(join(tmpdir(), "exec-inbox-runner-"));
  let dev: WranglerDev;
  let proxy: Awaited<ReturnType<typeof startFlakyProxy>>;

  beforeAll(async () => {
    dev = await startWranglerDev(join(root, "state"), "any");
    proxy = await startFlakyProxy(dev.base);
  });
  afterAll(async () => {
    await killAllRunners();
    await proxy?.close();
    await dev?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** A session with a run suspended on `handle`, and the callback routed through the proxy. */
  async function suspendedJob(sid: string, handle: string, command: string) {
    const inbox = agentClient(dev.base);
    await inbox.createSession({ id: sid });
    const reserved = await inbox.reserveJob(sid, { handle, command });
    const run = await inbox.registerRun(sid);
    await inbox.suspend(sid, run.run_id, { waiting_for: [handle] });
    const url = new URL(reserved.callback.url);
    return { url: `${proxy.base}${url.pathname}`, token: reserved.callback.token };
  }

  const job = (sid: string, handle: string) => agentClient(dev.base).getJob(sid, handle);

  it("retries through 503 and a 429 with Retry-After, then stops on the 202", async () => {
    const logs: string[] = [];
    const runner = new Runner({
      stateDir: join(root, "r1"),
      log: (line) => logs.push(line),
      baseDelayMs: 50,
    });
    const started = await runner.table.execCommand({
      cmd: "sleep 0.5; printf retried; exit 4",
      yield_time_ms: 250,
    });
    const handle = started.session_id!;
    const sid = `retry-${Date.now()}`;
    const callback = await suspendedJob(sid, handle, "cmd");
    proxy.script.push({ status: 503 }, { status: 429, retryAfter: "1" });
    runner.arm(handle, callback.url, callback.token);
    await waitFor(() =>
      (logs.find((line) => line.includes("accepted")) ?? "") !== "" ? true : undefined,
    );
    const mine = proxy.attempts.filter((attempt) => attempt.path.includes(sid));
    expect(mine.map((attempt) => attempt.status)).toEqual([503, 429, 202]);
    expect(mine[2]!.at - mine[1]!.at).toBeGreaterThanOrEqual(950);
    expect(await job(sid, handle)).toMatchObject({
      status: "completed",
      exit_code: 4,
      output: "retried",
    });
    expect(logs.join("\n")).not.toContain(callback.token);
    await runner.close();
  });

  it("stops on 410 when the session was re-created since the reservation, and logs why", async () => {
    const logs: string[] = [];
    const runner = new Runner({
      stateDir: join(root, "r2"),
      log: (line) => logs.push(line),
      baseDelayMs: 50,
    });
    const started = await runner.table.execCommand({
      cmd: "sleep 0.3; exit 0",
      yield_time_ms: 250,
    });
    const handle = started.session_id!;
    const sid = `gone-${Date.now()}`;
    const callback = await suspendedJob(sid, handle, "cmd");
    await agentClient(dev.base).deleteSession(sid);
    await agentClient(dev.base).createSession({ id: sid });
    runner.arm(handle, callback.url, callback.token);
    await waitFor(() => (logs.some((line) => line.includes("refused")) ? true : undefined));
    await sleep(500);
    expect(logs.find((line) => line.includes("refused"))).toMatch(
      /410 lifetime_ended; not retrying/,
    );
    expect(proxy.attempts.filter((attempt) => attempt.path.includes(sid))).toHaveLength(1);
    expect((await agentClient(dev.base).getSession(sid)).inbox.pending).toBe(0);
    await runner.close();
  });

  it("a runner killed with a callback still owed resends it after restart: stored once, never doubled", async () => {
    const stateDir = join(root, "r3");
    const first = await startRunnerProcess(stateDir);
    const started = await runnerCall(first.base, "/v1/exec_command", {
      cmd: "sleep 0.3; printf once",
      yield_time_ms: 250,
    });
    const handle = started.body.session_id;
    const sid = `journal-${Date.now()}`;
    const callback = await suspendedJob(sid, handle, "cmd");
    // exec-inbox is "down" for the first runner: every attempt fails until it is killed.
    proxy.script.push(...Array.from({ length: 50 }, () => ({ status: 503 })));
    expect(
      (await runnerCall(first.base, `/v1/processes/${handle}/callback`, callback)).status,
    ).toBe(202);
    await waitFor(() =>
      proxy.attempts.filter((a) => a.path.includes(sid)).length >= 2 ? true : undefined,
    );
    await first.kill();
    proxy.script.length = 0;

    const second = await startRunnerProcess(stateDir);
    await waitFor(() => (/callback \d+: accepted/.test(second.log()) ? true : undefined));
    const stored = await job(sid, handle);
    expect(stored).toMatchObject({ status: "completed", exit_code: 0, output: "once" });
    const session = await agentClient(dev.base).getSession(sid);
    expect(session.inbox.generation).toBe(1);
    await second.kill();

    // A third start finds nothing owed: the journal recorded the delivery.
    const third = await startRunnerProcess(stateDir);
    await sleep(800);
    expect(third.log()).not.toContain("recovering");
    await third.kill();
  });

  it("a process that died with the runner is reported as lost (runner_shutdown) after restart", async () => {
    const stateDir = join(root, "r4");
    const first = await startRunnerProcess(stateDir);
    const started = await runnerCall(first.base, "/v1/exec_command", {
      cmd: "sleep 60",
      yield_time_ms: 250,
    });
    const handle = started.body.session_id;
    const sid = `lost-${Date.now()}`;
    const callback = await suspendedJob(sid, handle, "sleep 60");
    await runnerCall(first.base, `/v1/processes/${handle}/callback`, callback);
    await first.kill();

    const second = await startRunnerProcess(stateDir);
    await waitFor(() => (/callback \d+: accepted/.test(second.log()) ? true : undefined));
    expect(await job(sid, handle)).toMatchObject({
      status: "lost",
      exit_code: null,
      ended_by: "runner_shutdown",
    });
    const session = await agentClient(dev.base).getSession(sid);
    expect(session.resume?.reason).toBe("background_exec_outcome_unknown");
    // A new process never reuses the handle of the lost one.
    const next = await runnerCall(second.base, "/v1/exec_command", {
      cmd: "true",
      yield_time_ms: 1000,
    });
    expect(next.status).toBe(200);
    const another = await runnerCall(second.base, "/v1/exec_command", {
      cmd: "sleep 5",
      yield_time_ms: 250,
    });
    expect(Number(another.body.session_id)).toBeGreaterThan(Number(handle));
    await second.kill();
  });

  it("a kill request is stored by exec-inbox as killed, ended by kill_request, and wakes the session", async () => {
    const runner = await startRunnerProcess(join(root, "r5"));
    const started = await runnerCall(runner.base, "/v1/exec_command", {
      cmd: "sleep 100 | cat",
      yield_time_ms: 250,
    });
    const handle = started.body.session_id;
    const sid = `kill-${Date.now()}`;
    const callback = await suspendedJob(sid, handle, "sleep 100 | cat");
    await runnerCall(runner.base, `/v1/processes/${handle}/callback`, callback);
    expect((await runnerCall(runner.base, `/v1/processes/${handle}/kill`, {})).status).toBe(200);
    await waitFor(() => (/callback \d+: accepted/.test(runner.log()) ? true : undefined));
    expect(await job(sid, handle)).toMatchObject({
      status: "killed",
      exit_code: null,
      ended_by: "kill_request",
    });
    const session = await agentClient(dev.base).getSession(sid);
    expect(session.resume?.reason).toBe("background_exec_completed");
    await runner.stop();
  });
});
