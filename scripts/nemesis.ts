// `npm run nemesis [-- --quick]`: exec-inbox (wrangler dev), four reference runners and a webhook
// receiver as real processes, every runner's heartbeats and completions through a TCP proxy that
// delays, resets and leaves connections half-open, while exec-inbox is SIGKILLed and restarted,
// one runner is SIGKILLed and restarted, one vanishes for good and one stalls (SIGSTOP) past its
// timeout. At the end: no completion lost or doubled, no job lost while its heartbeats arrived,
// every vanished job lost by heartbeat timeout, one resume_id per woken session.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  RUNNER_TOKEN,
  type RunnerProcess,
  startRunnerProcess,
} from "../test/runner/runner-process";
import {
  agentClient,
  freePort,
  startAgentHost,
  startWranglerDev,
  type WranglerDev,
} from "../test/support/local-stack";
import { callRunner } from "../test/support/runner-client";
import { scriptArgs } from "./lib/args";
import { type ConnectionFault, startTcpNemesis } from "./lib/tcp-nemesis";

const args = scriptArgs(["sessions", "jobs", "kills", "seed"]);
const quick = args.quick;
const SESSIONS = args.number("sessions", quick ? 8 : 24);
const JOBS = args.number("jobs", 3);
const KILLS = args.number("kills", quick ? 1 : 3);
const TIMEOUT_MS = 6_000;
/** How far the two clocks (the service's times, this process's) may disagree. */
const DOWNTIME_SLACK_MS = 1_000;
/** Commands run 1 s … this long; the load and the faults fall inside it. */
const LONGEST_MS = quick ? 14_000 : 40_000;

let seed = args.number("seed", 20261201);
const rng = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const between = (low: number, high: number) => Math.floor(low + rng() * (high - low));

type Role = "steady" | "restarted" | "vanished" | "stalled";
const ROLES: readonly Role[] = ["steady", "restarted", "vanished", "stalled"];

async function main(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-nemesis-"));
  const host = await startAgentHost();
  const devPort = await freePort();
  const proxyPort = await freePort();
  // One connection in ten misbehaves: a network a runner may meet, not one that is down.
  const faultFor = (): ConnectionFault => {
    const roll = rng();
    return roll < 0.05 ? "delay" : roll < 0.08 ? "reset" : roll < 0.1 ? "half_open" : "forward";
  };
  const proxy = await startTcpNemesis({
    port: proxyPort,
    targetPort: () => devPort,
    faultFor,
    delayMs: () => between(100, 1_500),
  });
  // Callbacks (heartbeats and completions) go through the proxy; the agent's own calls do not.
  const vars = {
    RESUME_URL_ALLOWLIST: "http://127.0.0.1:*",
    PUBLIC_BASE_URL: `http://127.0.0.1:${proxyPort}`,
  };
  let dev: WranglerDev = await startWranglerDev(join(stateDir, "inbox"), devPort, vars);
  const inbox = agentClient(dev.base);
  const runners = new Map<Role, RunnerProcess>();
  for (const role of ROLES) {
    runners.set(role, await startRunnerProcess(join(stateDir, `runner-${role}`)));
  }

  // Setup: each session's jobs on one runner (its sandbox), the agent suspended on all of them.
  const sessions: Array<{ sid: string; role: Role; handles: string[]; endsAt: number[] }> = [];
  const started = Date.now();
  for (let s = 0; s < SESSIONS; s += 1) {
    const role = ROLES[s % ROLES.length] as Role;
    const runner = runners.get(role) as RunnerProcess;
    const sid = `nemesis-${started.toString(36)}-${s}`;
    await inbox.createSession({ id: sid, resume_url: host.url });
    const handles: string[] = [];
    const endsAt: number[] = [];
    for (let j = 0; j < JOBS; j += 1) {
      const ms = between(1_000, LONGEST_MS);
      const cmd = `sleep ${(ms / 1000).toFixed(1)}; printf ${sid}-${j}`;
      const answer = await callRunner(runner.base, RUNNER_TOKEN, "/v1/exec_command", {
        cmd,
        yield_time_ms: 250,
      });
      const handle = String(answer.body.session_id);
      const { callback } = await inbox.reserveJob(sid, {
        handle,
        command: cmd,
        heartbeat_timeout_ms: TIMEOUT_MS,
      });
      const armed = await callRunner(
        runner.base,
        RUNNER_TOKEN,
        `/v1/processes/${handle}/callback`,
        callback,
      );
      if (armed.status >= 300) throw new Error(`arm failed: ${JSON.stringify(armed.body)}`);
      handles.push(handle);
      endsAt.push(Date.now() + ms);
    }
    const { run_id: runId } = await inbox.registerRun(sid);
    await inbox.suspend(sid, runId, { waiting_for: handles, ceiling_ms: 3_600_000 });
    sessions.push({ sid, role, handles, endsAt });
  }

  // The faults, at random moments inside the load.
  const window = LONGEST_MS - 2_000;
  const at = (ms: number) => sleep(Math.max(0, started + ms - Date.now()));
  const vanishAt = between(2_000, window);
  const downtimes: Array<[number, number]> = [];
  let vanishedAt = Number.POSITIVE_INFINITY;
  const faults_: Array<Promise<void>> = [
    (async () => {
      for (let k = 0; k < KILLS; k += 1) {
        await at(between((k * window) / KILLS, ((k + 1) * window) / KILLS));
        const down = Date.now();
        await dev.kill();
        await sleep(between(1_000, 2 * TIMEOUT_MS));
        // Down until the restart is spawned: its grace after a restart starts no sooner, however
        // long a busy machine takes to make it healthy.
        const restarted = Date.now();
        dev = await startWranglerDev(join(stateDir, "inbox"), devPort, vars);
        downtimes.push([down, restarted]);
        console.log(`nemesis: exec-inbox SIGKILLed and restarted (${k + 1}/${KILLS})`);
      }
    })(),
    (async () => {
      await at(between(2_000, window));
      await (runners.get("restarted") as RunnerProcess).kill();
      await sleep(2_000);
      // Same state directory, a new port: the runner reports its dead processes lost.
      runners.set("restarted", await startRunnerProcess(join(stateDir, "runner-restarted")));
      console.log("nemesis: runner 'restarted' SIGKILLed and restarted");
    })(),
    (async () => {
      await at(vanishAt);
      // The setup may outlast the chosen moment: what counts is when the runner really died.
      vanishedAt = Date.now();
      await (runners.get("vanished") as RunnerProcess).kill();
      console.log("nemesis: runner 'vanished' SIGKILLed for good");
    })(),
    (async () => {
      await at(between(2_000, window));
      const pid = (runners.get("stalled") as RunnerProcess).pid;
      process.kill(pid, "SIGSTOP");
      await sleep(3 * TIMEOUT_MS);
      process.kill(pid, "SIGCONT");
      console.log("nemesis: runner 'stalled' stopped for three timeouts, then continued");
    })(),
  ];
  await Promise.all(faults_);

  // Every session's wait ends: by results, by the runner's `lost`, or by heartbeat timeouts.
  const deadline = Date.now() + LONGEST_MS + 6 * TIMEOUT_MS + 30_000;
  const jobsOf = async (sid: string, handles: string[]) =>
    Promise.all(handles.map((handle) => inbox.getJob(sid, handle)));
  for (;;) {
    const views = await Promise.all(sessions.map((s) => inbox.getSession(s.sid)));
    if (views.every((view) => view.waiting_for_bash === null)) break;
    if (Date.now() > deadline) throw new Error("nemesis: some waits never ended");
    await sleep(1_000);
  }
  await sleep(3_000);

  // The checks.
  const problems: string[] = [];
  const tally = new Map<string, number>();
  const count = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1);
  for (const session of sessions) {
    const jobs = await jobsOf(session.sid, session.handles);
    const view = await inbox.getSession(session.sid);
    if (view.inbox.generation !== jobs.length) {
      problems.push(
        `${session.sid}: ${view.inbox.generation} results admitted for ${jobs.length} jobs`,
      );
    }
    const resumeIds = new Set(
      host.received
        .map((hit) => JSON.parse(hit.body) as { session_id: string; resume_id: string })
        .filter((payload) => payload.session_id === session.sid)
        .map((payload) => payload.resume_id),
    );
    if (resumeIds.size !== 1) problems.push(`${session.sid}: ${resumeIds.size} resume_ids`);
    jobs.forEach((job, j) => {
      count(
        `${session.role} ${job.status}${job.ended_by === "heartbeat_timeout" ? " (heartbeat timeout)" : ""}`,
      );
      // A command that ended up to a second before its runner died may still have been reported.
      const ended = (session.endsAt[j] as number) < vanishedAt + 1_000;
      if (job.status === "completed" && job.output !== `${session.sid}-${j}`) {
        problems.push(`${session.sid} ${job.handle}: output ${JSON.stringify(job.output)}`);
      }
      if (job.ended_by === "heartbeat_timeout") {
        // Never early: silence for a whole timeout, not counting the time exec-inbox was down.
        const heard = Date.parse(job.last_heartbeat_at ?? job.reserved_at);
        const lostAt = Date.parse(job.completed_at ?? "");
        const down = downtimes.reduce(
          (sum, [a, b]) => sum + Math.max(0, Math.min(b, lostAt) - Math.max(a, heard)),
          0,
        );
        // The downtime ends when the restart is spawned, so it is never long; the slack is the
        // clocks' (the service's and this process's) granularity.
        if (lostAt - heard - down < TIMEOUT_MS - DOWNTIME_SLACK_MS) {
          problems.push(
            `${session.sid} ${job.handle}: lost after ${lostAt - heard} ms of silence, ${down} ms of it downtime`,
          );
        }
      }
      if (session.role === "vanished" && !ended && job.ended_by !== "heartbeat_timeout") {
        problems.push(`${session.sid} ${job.handle}: its runner vanished, yet it is ${job.status}`);
      }
      if (job.status === "running") problems.push(`${session.sid} ${job.handle}: still running`);
    });
  }
  console.log("\nnemesis: jobs by runner role and result");
  for (const [key, n] of [...tally].sort()) console.log(`  ${key}: ${n}`);
  console.log(`nemesis: proxy connections ${JSON.stringify(proxy.counts)}`);
  console.log(`nemesis: webhooks received ${host.received.length} for ${sessions.length} sessions`);

  for (const runner of runners.values()) await runner.kill();
  await dev.stop();
  await proxy.close();
  await host.close();
  rmSync(stateDir, { recursive: true, force: true });
  if (problems.length > 0) {
    console.error(`\nnemesis: ${problems.length} problems:\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  console.log("\nnemesis: no completion lost or doubled, no live job lost, one resume_id per wake");
}

await main();
