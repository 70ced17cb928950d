import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/local-stack";
import { killAllRunners } from "./runner-process";
import { runnerCall, runnerPoll, startFakeInbox, startRunnerProcess, waitUntil } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-journal-"));
afterAll(async () => {
  await killAllRunners();
  rmSync(root, { recursive: true, force: true });
});

const journalLines = (stateDir: string) =>
  readFileSync(join(stateDir, "callbacks.jsonl"), "utf8").split("\n");

describe("the runner's journal across crashes (real processes, real files)", () => {
  it("a torn last journal line is cut on open, and the record after it survives a restart", async () => {
    const stateDir = join(root, "torn");
    mkdirSync(stateDir, { recursive: true });
    // What a crash mid-write leaves: a complete record, then half of one, no newline.
    appendFileSync(
      join(stateDir, "callbacks.jsonl"),
      `${JSON.stringify({ type: "ids", through: 1000, at: 1 })}\n{"type":"done","session_id":"10`,
    );
    const inbox = await startFakeInbox(() => 503);
    const first = await startRunnerProcess(stateDir);
    const started = await runnerCall(first.base, "/v1/exec_command", {
      cmd: "sleep 30",
      yield_time_ms: 250,
    });
    const handle = started.body.session_id as string;
    await runnerCall(first.base, `/v1/processes/${handle}/callback`, {
      url: inbox.url(handle),
      token: "callback-token",
    });
    await first.kill();
    const lines = journalLines(stateDir);
    expect(lines.at(-1)).toBe("");
    for (const line of lines.slice(0, -1)) expect(() => JSON.parse(line)).not.toThrow();

    const second = await startRunnerProcess(stateDir);
    await waitFor(() => (inbox.of(handle).length > 0 ? true : undefined));
    expect(second.log()).toContain(`recovering callback ${handle} (lost)`);
    expect(inbox.of(handle)[0]!.body).toMatchObject({ status: "lost" });
    await second.kill();
    await inbox.close();
  });

  it("a process started but never armed before a crash does not give its id to a later process", async () => {
    const stateDir = join(root, "ids");
    const first = await startRunnerProcess(stateDir);
    const before = await runnerCall(first.base, "/v1/exec_command", {
      cmd: "sleep 30",
      yield_time_ms: 250,
    });
    await first.kill();
    const second = await startRunnerProcess(stateDir);
    const after = await runnerCall(second.base, "/v1/exec_command", {
      cmd: "sleep 30",
      yield_time_ms: 250,
    });
    await second.kill();
    expect(Number(after.body.session_id)).toBeGreaterThan(Number(before.body.session_id));
  });

  it("exited processes are forgotten after the retention window, but not while their completion is owed", async () => {
    let inboxUp = false;
    const inbox = await startFakeInbox(() => (inboxUp ? 202 : 503));
    const runner = await startRunnerProcess(join(root, "prune"), {
      env: { RUNNER_RETENTION_MS: "1000" },
    });
    const start = async () =>
      (
        await runnerCall(runner.base, "/v1/exec_command", {
          cmd: "sleep 0.3; printf done",
          yield_time_ms: 250,
        })
      ).body.session_id as string;
    const unarmed = await start();
    const owed = await start();
    await runnerCall(runner.base, `/v1/processes/${owed}/callback`, {
      url: inbox.url(owed),
      token: "callback-token",
    });
    await sleep(2500);
    const forgotten = await runnerPoll(runner.base, unarmed);
    expect(forgotten.status).toBe(404);
    expect(forgotten.body.detail).toMatch(/retention window/);
    // exec-inbox has not taken the result yet: the output stays pullable.
    expect(await runnerPoll(runner.base, owed)).toMatchObject({
      status: 200,
      body: { exit_code: 0, output: "done" },
    });

    inboxUp = true;
    await waitFor(() => (inbox.of(owed).some((a) => a.status === 202) ? true : undefined));
    await waitUntil(async () => (await runnerPoll(runner.base, owed)).status === 404);
    const health = await (await fetch(`${runner.base}/healthz`)).json();
    expect(health).toMatchObject({ live_processes: 0, held_processes: 0 });
    await runner.stop();
    await inbox.close();
  });
});
