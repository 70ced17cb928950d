import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { Runner } from "../../runner/src/runner";
import { heartbeatPeriodMs, heartbeatUrlOf } from "../../shared/heartbeat-loop";
import { waitFor } from "../support/local-stack";
import { type Arrival, gaps, startLivenessInbox } from "./liveness-inbox";
import { groupMembers, killAllRunners } from "./runner-process";
import { runnerCall, startRunnerProcess } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-heartbeats-"));
const runners: Runner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((runner) => runner.close(0)));
  await killAllRunners();
  rmSync(root, { recursive: true, force: true });
});

/** A runner in this process (real commands), with timeouts below the route's 5 s floor. */
function inProcessRunner(name: string, heartbeatRetryBaseMs?: number) {
  const logs: string[] = [];
  const runner = new Runner({
    stateDir: join(root, name),
    log: (line) => logs.push(line),
    baseDelayMs: 50,
    heartbeatRetryBaseMs,
  });
  runners.push(runner);
  return { runner, logs };
}

/** How long a heartbeat of a 300 ms timeout may hang before the runner abandons it (heartbeat-loop.ts). */
const HEARTBEAT_BOUND_MS = 1000;

const bodies = (arrivals: readonly Arrival[]) => arrivals.map((arrival) => arrival.body);

describe("when a runner heartbeats, and how often", () => {
  it("a job heartbeats every third of its timeout, every 30 s without one, and early when the arm did not say", () => {
    expect(heartbeatPeriodMs(9000)).toBe(3000);
    expect(heartbeatPeriodMs(null)).toBe(30_000);
    // An older caller's arm: soon enough for the shortest timeout a service may hold (5 s).
    expect(heartbeatPeriodMs(undefined)).toBe(1666);
  });

  it("the heartbeat URL is the arm's, else the completion URL's sibling, and none when the arm says null", () => {
    const completion = "http://inbox.test/v1/sessions/s/exec-jobs/1001/completion";
    expect(heartbeatUrlOf(completion, {})).toBe(
      "http://inbox.test/v1/sessions/s/exec-jobs/1001/heartbeat",
    );
    expect(heartbeatUrlOf(completion, { heartbeat_url: "http://other.test/hb" })).toBe(
      "http://other.test/hb",
    );
    expect(heartbeatUrlOf(completion, { heartbeat_url: null })).toBeNull();
    expect(heartbeatUrlOf("http://inbox.test/results/1001", {})).toBeNull();
  });

  it("an armed job heartbeats every third of its timeout with the last 4 KiB of its output, cut on a character boundary", async () => {
    const inbox = await startLivenessInbox({ timeoutMs: 3000 });
    const { runner } = inProcessRunner("period");
    // 2,500 two-byte characters and a "!": the last 4,096 bytes begin half-way through one.
    const job = runner.table.start("printf 'é%.0s' $(seq 2500); printf '!'; sleep 30", undefined);
    await waitFor(() => (job.full.totalBytes === 5001 ? true : undefined));
    runner.arm(job.sessionId, inbox.completionUrl(job.sessionId), "token", {
      heartbeat_timeout_ms: 3000,
    });
    const beats = await waitFor(() => {
      const seen = inbox.heartbeats(job.sessionId);
      return seen.length >= 4 ? seen : undefined;
    });
    // Every second, as the receiver clocks them: one beat that arrives late makes the next gap
    // short, so no gap reaches the timeout (never silent that long; a 3 s timeout leaves a busy
    // machine two seconds of stalls) and, on average, they are at least half a period apart (not
    // a flood).
    const seen = gaps(beats);
    for (const gap of seen) expect(gap).toBeLessThan(3000);
    expect(seen.reduce((sum, gap) => sum + gap, 0) / seen.length).toBeGreaterThanOrEqual(500);
    expect(bodies(beats)[0]).toEqual({
      output_tail: `${"é".repeat(2047)}!`,
      output_bytes_total: 5001,
    });
    runner.table.kill(job.sessionId);
    await inbox.close();
  });

  it("the arm route takes the reservation's callback whole: the heartbeat URL it names, and an older arm learns its timeout from the first answer", async () => {
    const inbox = await startLivenessInbox({ timeoutMs: 6000 });
    const runner = await startRunnerProcess(join(root, "route"));
    const start = async () => {
      const started = await runnerCall(runner.base, "/v1/exec_command", {
        cmd: "sleep 30",
        yield_time_ms: 250,
      });
      return started.body.session_id as string;
    };
    const named = await start();
    const older = await start();
    const named_url = `${inbox.base}/v1/sessions/elsewhere/exec-jobs/${named}/heartbeat`;
    const arms = await Promise.all([
      runnerCall(runner.base, `/v1/processes/${named}/callback`, {
        url: inbox.completionUrl(named),
        token: "named-token",
        heartbeat_url: named_url,
        heartbeat_timeout_ms: 5000,
      }),
      runnerCall(runner.base, `/v1/processes/${older}/callback`, {
        url: inbox.completionUrl(older),
        token: "older-token",
      }),
    ]);
    expect(arms.map((arm) => arm.status)).toEqual([202, 202]);
    const armedAt = Date.now();
    const olderBeats = await waitFor(() => {
      const seen = inbox.heartbeats(older);
      return seen.length >= 4 ? seen : undefined;
    });
    // The first after 5 s / 3 (what any service's timeout allows), then 6 s / 3 as answered. On a
    // busy machine one beat may arrive late: the first is bounded by half the timeout, and the
    // later period is their average over three gaps, nearer 2000 than the 1666 it started with.
    expect(olderBeats[0]!.at - armedAt).toBeLessThan(3000);
    const later = gaps(olderBeats).slice(0, 3);
    expect(later.reduce((sum, gap) => sum + gap, 0) / later.length).toBeGreaterThanOrEqual(1833);
    expect(olderBeats[0]!.path).toBe(`/v1/sessions/s/exec-jobs/${older}/heartbeat`);
    expect(inbox.heartbeats(named).map((beat) => beat.path)).toContain(
      `/v1/sessions/elsewhere/exec-jobs/${named}/heartbeat`,
    );
    await runner.stop();
    await inbox.close();
  });
});

describe("what a heartbeat's answer makes the runner do", () => {
  it("a failed heartbeat (503, 429, a reset connection) is retried soon with backoff, not a period later", async () => {
    const script = [503, 429, "reset"] as const;
    const inbox = await startLivenessInbox({
      timeoutMs: 1500,
      heartbeat: (_handle, attempt) => script[attempt - 1] ?? 200,
    });
    const { runner, logs } = inProcessRunner("retry", 50);
    const job = runner.table.start("sleep 30", undefined);
    runner.arm(job.sessionId, inbox.completionUrl(job.sessionId), "token", {
      heartbeat_timeout_ms: 1500,
    });
    const beats = await waitFor(() => {
      const seen = inbox.heartbeats(job.sessionId);
      return seen.length >= 5 ? seen : undefined;
    });
    // What the runner decided, in order: 50, 100, 200 ms of backoff (the log says it; the clock of
    // a busy machine would only blur it), then the period again once one got through.
    const said = logs.join("\n");
    const retries = [
      ...said.matchAll(/heartbeat (?:503 scripted_503|429 \S+|\S+), retry in (\d+) ms/g),
    ];
    expect(retries.map(([, ms]) => Number(ms))).toEqual([50, 100, 200]);
    expect(said).toMatch(/heartbeat 503 scripted_503, retry in 50 ms/);
    // Soon, not a period later: the fourth beat (the first answered 200) arrived within the
    // heartbeat timeout of the first one, so the job was never at risk of being declared lost.
    expect(beats[3]!.at - beats[0]!.at).toBeLessThan(1500);
    runner.table.kill(job.sessionId);
    await inbox.close();
  });

  it("a heartbeat answer asking for cancel ends the command as the kill route does, and its result says kill_request", async () => {
    const inbox = await startLivenessInbox({
      timeoutMs: 600,
      heartbeat: (_handle, attempt) => ({ status: 200, cancel: attempt >= 2 }),
    });
    const { runner } = inProcessRunner("cancel");
    const job = runner.table.start("echo $$; sleep 100 | cat", undefined);
    runner.arm(job.sessionId, inbox.completionUrl(job.sessionId), "token", {
      heartbeat_timeout_ms: 600,
    });
    const [completion] = await waitFor(() => {
      const seen = inbox.completions(job.sessionId);
      return seen.length > 0 ? seen : undefined;
    });
    expect(completion!.body).toMatchObject({
      status: "killed",
      exit_code: null,
      ended_by: "kill_request",
      observed: false,
    });
    expect(groupMembers(Number(completion!.body.output.trim()))).toEqual([]);
    const beats = inbox.heartbeats(job.sessionId);
    // Ended by SIGTERM right after the answer, well before the kill's SIGKILL grace (2 s).
    expect(completion!.at - beats[1]!.at).toBeLessThan(1500);
    expect(beats.filter((beat) => beat.at > completion!.at)).toEqual([]);
    await inbox.close();
  });

  it("409 and 410 end a job's heartbeats, and so do 401 and 404, each logged", async () => {
    const statuses = [409, 410, 401, 404] as const;
    const byHandle = new Map<string, number>();
    const inbox = await startLivenessInbox({
      timeoutMs: 300,
      heartbeat: (handle) => byHandle.get(handle) ?? 200,
    });
    const { runner, logs } = inProcessRunner("refused");
    const jobs = [...statuses, 200].map((status) => {
      const job = runner.table.start("sleep 30", undefined);
      byHandle.set(job.sessionId, status);
      runner.arm(job.sessionId, inbox.completionUrl(job.sessionId), "token", {
        heartbeat_timeout_ms: 300,
      });
      return job;
    });
    await sleep(800);
    const counts = jobs.map((job) => inbox.heartbeats(job.sessionId).length);
    expect(counts.slice(0, 4)).toEqual([1, 1, 1, 1]);
    // The same runner goes on heartbeating a job the service still takes heartbeats for.
    expect(counts[4]).toBeGreaterThanOrEqual(5);
    for (const status of statuses) {
      expect(logs.join("\n")).toContain(`heartbeat refused with ${status} scripted_${status}`);
    }
    for (const job of jobs) runner.table.kill(job.sessionId);
    await inbox.close();
  });
});

describe("heartbeats and the completion", () => {
  it("once a job has exited no heartbeat reaches the service after its completion, even while the completion is retried", async () => {
    const inbox = await startLivenessInbox({
      timeoutMs: 300,
      completion: (_handle, attempt) => (attempt <= 3 ? 503 : 202),
    });
    const { runner } = inProcessRunner("after-exit");
    const job = runner.table.start("sleep 0.8", undefined);
    runner.arm(job.sessionId, inbox.completionUrl(job.sessionId), "token", {
      heartbeat_timeout_ms: 300,
    });
    // Four or more: an attempt the runner gave up on (a third of the timeout, 100 ms here) may
    // still have arrived, and its retry after it, between two looks.
    await waitFor(() => (inbox.completions(job.sessionId).length >= 4 ? true : undefined));
    // Three periods more: a loop still running would send another heartbeat in them.
    await sleep(300);
    const arrivals = inbox.of(job.sessionId);
    // Some went out while it ran (how many depends on the machine's speed, one every 100 ms).
    expect(inbox.heartbeats(job.sessionId).length).toBeGreaterThanOrEqual(1);
    // By the order they arrived in, not their clock: a heartbeat that arrived just before the
    // completion can share its millisecond.
    const firstCompletion = arrivals.findIndex((arrival) => arrival.route === "completion");
    expect(
      arrivals.slice(firstCompletion).filter((arrival) => arrival.route === "heartbeat"),
    ).toEqual([]);
    await inbox.close();
  });

  it("a heartbeat the service never answers does not hold back the completion", async () => {
    // The command ends once the first heartbeat hangs: the inbox's handler writes its stdin.
    let release = () => {};
    const inbox = await startLivenessInbox({
      timeoutMs: 300,
      heartbeat: () => {
        release();
        return "hang";
      },
    });
    const { runner } = inProcessRunner("hanging");
    const job = runner.table.start("read line; printf done", undefined);
    release = () => void runner.table.writeStdin({ session_id: job.sessionId, chars: "go\n" });
    runner.arm(job.sessionId, inbox.completionUrl(job.sessionId), "token", {
      heartbeat_timeout_ms: 300,
    });
    const [completion] = await waitFor(() => {
      const seen = inbox.completions(job.sessionId);
      return seen.length > 0 ? seen : undefined;
    });
    expect(completion!.body).toMatchObject({ status: "completed", exit_code: 0, output: "done" });
    // The command ended as the heartbeat arrived: a completion that waited for that heartbeat to
    // be abandoned would come a whole second (its bound) after it, ten times what this takes.
    const [heartbeat] = inbox.heartbeats(job.sessionId);
    expect(completion!.at - heartbeat!.at).toBeLessThan(HEARTBEAT_BOUND_MS);
    expect(inbox.heartbeats(job.sessionId)).toHaveLength(1);
    await inbox.close();
  });

  it("a runner restarted over its journal reports the job it lost at once and heartbeats it no more", async () => {
    const inbox = await startLivenessInbox({ timeoutMs: 5000 });
    const stateDir = join(root, "restart");
    const first = await startRunnerProcess(stateDir);
    const started = await runnerCall(first.base, "/v1/exec_command", {
      cmd: "sleep 100",
      yield_time_ms: 250,
    });
    const handle = started.body.session_id as string;
    await runnerCall(first.base, `/v1/processes/${handle}/callback`, {
      url: inbox.completionUrl(handle),
      token: "token",
      heartbeat_url: inbox.heartbeatUrl(handle),
      heartbeat_timeout_ms: 5000,
    });
    await waitFor(() => (inbox.heartbeats(handle).length > 0 ? true : undefined));
    await first.kill();
    const beatsBefore = inbox.heartbeats(handle).length;
    const second = await startRunnerProcess(stateDir);
    await waitFor(() => (inbox.completions(handle).length > 0 ? true : undefined));
    expect(bodies(inbox.completions(handle))).toEqual([
      expect.objectContaining({ status: "lost", ended_by: "runner_shutdown" }),
    ]);
    // Past a period: a heartbeat now would keep a job alive whose process nobody holds.
    await sleep(1900);
    expect(inbox.heartbeats(handle)).toHaveLength(beatsBefore);
    await second.stop();
    await inbox.close();
  });
});
