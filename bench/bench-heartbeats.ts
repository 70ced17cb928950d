// `npm run bench -- heartbeats [--quick]`, also a section of `npm run bench`: what liveness costs.
// Heartbeats are the most frequent request a runner sends, so the service
// promises that one without new progress writes at most one row and that the deadlines of every
// heartbeating job of a session share its one alarm. Measured on the built Worker on workerd
// (Miniflare, direct socket), from the session object's own counters (`GET …/stats`) and the
// workerd process's CPU (/proc), as the rest of the benchmark measures.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { type Callback, type ExecInboxClient, postCompletion } from "@exec-inbox/client";
import { scriptArgs } from "../scripts/lib/args";
import { agentClient } from "../test/support/local-stack";
import { heartbeatsInThread, heartbeatTargets } from "./lib/heartbeat-runners";
import { buildWorker, type ServedWorker, serveExecInbox } from "./lib/miniflare-stack";
import { cpuSeconds, loadAverage, settle } from "./lib/proc";
import { say, table } from "./lib/report";
import { percentile } from "./lib/stats";

/** One completion sample every 250 ms: sparse beside 64 heartbeats/s, so they measure, not load. */
const PACE_MS = 250;
const JOBS = 64;

type Stats = Awaited<ReturnType<ExecInboxClient["getSessionStats"]>>;
type Counters = Pick<Stats, "rows_written" | "rows_read" | "alarms" | "index_rows_written">;

/** What the reference runner sends: the last 4 KiB of output, new each time (the worst case). */
const tailBody = (i: number) => ({
  output_tail: `${String(i).padStart(8, "0")}\n`.padEnd(4096, "x"),
  output_bytes_total: (i + 1) * 4096,
});

/** One heartbeat with the job's callback token; its HTTP status. */
async function heartbeat(callback: Callback, body?: object): Promise<number> {
  const response = await fetch(callback.heartbeat_url ?? "", {
    method: "POST",
    headers: {
      authorization: `Bearer ${callback.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

/** The counters' change, refusing a pair that spans a restart of the object (they start at 0). */
function delta(before: Stats, after: Stats): Counters {
  if (after.rows_written < before.rows_written || after.alarms < before.alarms) {
    throw new Error("the session object restarted during the measurement: its counters reset");
  }
  return {
    rows_written: after.rows_written - before.rows_written,
    rows_read: after.rows_read - before.rows_read,
    alarms: after.alarms - before.alarms,
    index_rows_written: after.index_rows_written - before.index_rows_written,
  };
}

/** Item 1: `count` sequential heartbeats of one job, bare or carrying a 4 KiB tail. */
async function perHeartbeat(served: ServedWorker, withTail: boolean, count: number) {
  const inbox = agentClient(served.directBase);
  const sid = `hb-one-${withTail ? "tail" : "bare"}-${Date.now().toString(36)}`;
  await inbox.createSession({ id: sid });
  // A 30 s timeout: the deadline exists (and would be the alarm's) but cannot pass in this phase,
  // so any alarm counted here is one a heartbeat caused.
  const { callback } = await inbox.reserveJob(sid, {
    handle: "j",
    command: "make test",
    heartbeat_timeout_ms: 30_000,
  });
  const send = (i: number) => heartbeat(callback, withTail ? tailBody(i) : undefined);
  for (let i = 0; i < 20; i += 1) await send(i); // warm: statements prepared, isolate hot
  await settle(() => served.pids);
  const before = await inbox.getSessionStats(sid);
  const cpu0 = cpuSeconds(served.pids);
  const latencies: number[] = [];
  for (let i = 20; i < 20 + count; i += 1) {
    const t0 = performance.now();
    const status = await send(i);
    latencies.push(performance.now() - t0);
    if (status !== 200) throw new Error(`heartbeat answered ${status}`);
  }
  const cpuMs = ((cpuSeconds(served.pids) - cpu0) / count) * 1000;
  const d = delta(before, await inbox.getSessionStats(sid));
  return {
    rows: d.rows_written / count,
    read: d.rows_read / count,
    alarms: d.alarms / count,
    index: d.index_rows_written / count,
    cpuMs,
    p50: percentile(latencies, 50),
  };
}

/** Reserves a job and completes it at once: the completion path, timed two ways. */
async function completionSample(inbox: ExecInboxClient, sid: string, handle: string) {
  const t0 = performance.now();
  const { callback } = await inbox.reserveJob(sid, { handle, command: "echo ok" });
  const t1 = performance.now();
  await postCompletion(callback, { status: "completed", exit_code: 0, output: "ok\n" });
  const t2 = performance.now();
  return { completion: t2 - t1, reserveToCompletion: t2 - t0 };
}

type Sample = Awaited<ReturnType<typeof completionSample>>;
/** Samples into the heartbeating session itself, and into another session of the same process. */
interface Samples {
  readonly same: Sample[];
  readonly other: Sample[];
}

/**
 * One completion every `PACE_MS` until `untilMs` (performance.now()), sequential, alternating
 * between the heartbeats' own session (their object's queue) and another (the process's CPU only).
 */
async function sampleCompletions(
  inbox: ExecInboxClient,
  sids: readonly [string, string],
  label: string,
  untilMs: number,
): Promise<Samples> {
  const samples: Samples = { same: [], other: [] };
  for (let i = 0; performance.now() < untilMs; i += 1) {
    const next = performance.now() + PACE_MS;
    const sample = await completionSample(inbox, sids[i % 2] ?? "", `${label}-${i}`);
    (i % 2 === 0 ? samples.same : samples.other).push(sample);
    await sleep(Math.max(0, next - performance.now()));
  }
  return samples;
}

/** A phase without heartbeats: what one completion sample costs, so it can be taken out below. */
async function quietPhase(
  served: ServedWorker,
  sids: readonly [string, string],
  label: string,
  ms: number,
) {
  const inbox = agentClient(served.directBase);
  await settle(() => served.pids);
  const before = await inbox.getSessionStats(sids[0]);
  const cpu0 = cpuSeconds(served.pids);
  const samples = await sampleCompletions(inbox, sids, label, performance.now() + ms);
  return {
    samples,
    cpu: cpuSeconds(served.pids) - cpu0,
    rows: delta(before, await inbox.getSessionStats(sids[0])).rows_written,
  };
}

/** Items 2 and 3: 64 jobs of one session heartbeating once a second, completions beside them. */
async function sixtyFourJobs(served: ServedWorker, durationMs: number) {
  // Half the run, so the run spans two timeout periods (two alarms at most, by the target).
  const timeoutMs = durationMs / 2;
  const inbox = agentClient(served.directBase);
  const run = Date.now().toString(36);
  const sids = [`hb-64-${run}`, `hb-other-${run}`] as const;
  for (const id of sids) await inbox.createSession({ id });
  // Without, before and after (A/B/A), so the machine's drift falls on both sides alike.
  const first = await quietPhase(served, sids, "before", durationMs / 2);

  const callbacks: Callback[] = [];
  for (let j = 0; j < JOBS; j += 1) {
    const reserved = await inbox.reserveJob(sids[0], {
      handle: `hb-${j}`,
      command: `job ${j}`,
      heartbeat_timeout_ms: timeoutMs,
    });
    callbacks.push(reserved.callback);
  }
  const before = await inbox.getSessionStats(sids[0]);
  const cpu0 = cpuSeconds(served.pids);
  const end = performance.now() + durationMs;
  const runners = heartbeatsInThread(heartbeatTargets(callbacks), durationMs);
  const beside = sampleCompletions(inbox, sids, "beside", end);
  const { latencies, refused } = await runners;
  const samples = await beside;
  const cpu = cpuSeconds(served.pids) - cpu0;
  const counters = delta(before, await inbox.getSessionStats(sids[0]));
  // Every job must still be running: none declared lost while its heartbeats arrived.
  const statuses = await Promise.all(callbacks.map((_, j) => inbox.getJob(sids[0], `hb-${j}`)));
  const lost = statuses.filter((job) => job.status !== "running").length;
  for (const callback of callbacks) {
    await postCompletion(callback, { status: "completed", exit_code: 0, output: "done\n" });
  }
  const last = await quietPhase(served, sids, "after", durationMs / 2);
  // The control: the same 64 requests a second to a no-op object route, so what any traffic at
  // that rate costs the samples on this machine (two cores, shared) is told from the heartbeats'.
  const noop = { url: `${served.directBase}/healthz/object` };
  await settle(() => served.pids);
  const controlCpu0 = cpuSeconds(served.pids);
  const controlEnd = performance.now() + durationMs / 2;
  const controlRunners = heartbeatsInThread(Array(JOBS).fill(noop), durationMs / 2);
  const control = await sampleCompletions(inbox, sids, "control", controlEnd);
  const controlCalls = await controlRunners;
  if (controlCalls.refused > 0) throw new Error("the no-op route refused a request");
  const controlCpu = cpuSeconds(served.pids) - controlCpu0;

  // The completions sampled beside the heartbeats are taken out at what one cost without them:
  // rows of the heartbeats' session per sample into it, the process's CPU per sample into either.
  const quiet: Samples = {
    same: [...first.samples.same, ...last.samples.same],
    other: [...first.samples.other, ...last.samples.other],
  };
  const rowsPerSample = (first.rows + last.rows) / quiet.same.length;
  const cpuPerSample = (first.cpu + last.cpu) / (quiet.same.length + quiet.other.length);
  const heartbeats = latencies.length;
  const p50 = (list: Sample[], key: keyof Sample) =>
    percentile(
      list.map((s) => s[key]),
      50,
    );
  const compare = (key: keyof Sample) =>
    (["same", "other"] as const).map((where) => ({
      with: p50(samples[where], key),
      without: p50(quiet[where], key),
      control: p50(control[where], key),
      count: `${samples[where].length} / ${quiet[where].length}`,
    }));
  return {
    timeoutMs,
    heartbeats,
    rate: heartbeats / (durationMs / 1000),
    refused,
    lost,
    heartbeatP50: percentile(latencies, 50),
    heartbeatP99: percentile(latencies, 99),
    rowsRaw: counters.rows_written,
    rows: (counters.rows_written - samples.same.length * rowsPerSample) / heartbeats,
    cpuMs:
      ((cpu - (samples.same.length + samples.other.length) * cpuPerSample) / heartbeats) * 1000,
    controlCpuMs:
      ((controlCpu - (control.same.length + control.other.length) * cpuPerSample) /
        controlCalls.latencies.length) *
      1000,
    alarms: counters.alarms,
    index: counters.index_rows_written,
    completion: compare("completion"),
    reserve: compare("reserveToCompletion"),
  };
}

const f = (value: number, digits = 2) => value.toFixed(digits);
const verdict = (met: boolean) => (met ? "met" : "**missed**");

export async function benchHeartbeats(script: string, quick: boolean): Promise<void> {
  const count = quick ? 100 : 500;
  const durationMs = quick ? 15_000 : 60_000;
  say(
    `### Liveness: what heartbeats cost (\`npm run bench -- heartbeats${quick ? " --quick" : ""}\`)`,
  );
  say(`Load average at start: ${loadAverage()}.`);
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-bench-hb-"));
  const served = await serveExecInbox(script, join(state, "mf"));
  try {
    const bare = await perHeartbeat(served, false, count);
    const tail = await perHeartbeat(served, true, count);
    table(
      [
        `${count} sequential heartbeats of one job`,
        "rows written",
        "rows read",
        "alarms",
        "D1 index rows",
        "workerd CPU",
        "p50",
        "target",
      ],
      [bare, tail].map((m, i) => [
        i === 0 ? "bare (no progress)" : "4 KiB `output_tail` (new each time)",
        f(m.rows),
        f(m.read),
        f(m.alarms),
        f(m.index),
        `${f(m.cpuMs)} ms`,
        `${f(m.p50)} ms`,
        i === 0 ? `≤ 1 row, 0 alarms: ${verdict(m.rows <= 1 && m.alarms === 0)}` : "–",
      ]),
    );
    const r = await sixtyFourJobs(served, durationMs);
    const periods = durationMs / r.timeoutMs;
    say(
      `One session, ${JOBS} jobs each heartbeating once a second (4 KiB tail) for ${durationMs / 1000} s, heartbeat timeout ${r.timeoutMs / 1000} s; a completion (reserve, then POST) every ${PACE_MS} ms beside them, in turn into their session and into another, and the same for ${durationMs / 2000} s without them before and after:`,
    );
    table(
      ["figure", "measured", "target"],
      [
        ["heartbeats sent (per second)", `${r.heartbeats} (${f(r.rate, 1)})`, `${JOBS}/s`],
        [
          "heartbeats refused / jobs not running at the end",
          `${r.refused} / ${r.lost}`,
          `0 / 0: ${verdict(r.refused === 0 && r.lost === 0)}`,
        ],
        ["heartbeat p50 / p99", `${f(r.heartbeatP50)} / ${f(r.heartbeatP99)} ms`, "–"],
        [
          "rows written per heartbeat (all rows in the phase)",
          `${f(r.rows)} (${r.rowsRaw})`,
          `≤ 1 (tail new each time)`,
        ],
        [
          "workerd CPU per heartbeat (per no-op object call, control)",
          `${f(r.cpuMs)} ms (${f(r.controlCpuMs)} ms)`,
          "–",
        ],
        [
          "alarm invocations in the session",
          `${r.alarms}`,
          `≤ ${periods} (1 per timeout): ${verdict(r.alarms <= periods)}`,
        ],
        [
          "D1 index rows written in the phase (heartbeats and sampled completions)",
          `${r.index}`,
          "–",
        ],
        ...(["in the same session", "in another session"] as const).flatMap((where, i) => {
          const c = r.completion[i];
          const v = r.reserve[i];
          if (c === undefined || v === undefined) return [];
          const ratio = c.with / c.without;
          return [
            [
              `completion POST → answered, ${where}: p50 with / without (samples)`,
              `${f(c.with)} / ${f(c.without)} ms = ${f(ratio)}× (${c.count})`,
              `≤ 1.10×: ${verdict(ratio <= 1.1)}`,
            ],
            [
              `the same beside 64 no-op object calls a second (control)`,
              `${f(c.control)} / ${f(c.without)} ms = ${f(c.control / c.without)}×`,
              "–",
            ],
            [
              `reserve → completion answered, ${where}: p50 with / without`,
              `${f(v.with)} / ${f(v.without)} ms = ${f(v.with / v.without)}×`,
              "–",
            ],
          ];
        }),
      ],
    );
    say(
      "Rows and CPU per heartbeat in the 64-job phase are the phase's totals less the sampled completions at what one cost without heartbeats, over the heartbeats sent.",
    );
    say(`Load average at end: ${loadAverage()}.`);
  } finally {
    await served.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  benchHeartbeats(buildWorker(".", ".bench/exec-inbox"), scriptArgs([]).quick).catch(
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
