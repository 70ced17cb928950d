// `npm run bench -- soak [--minutes 3 --sessions 20]`: holds a steady mix of every operation
// against wrangler dev, and reports throughput, error rate, workerd memory over time and what
// retention leaves stored.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ExecInboxError, postCompletion } from "@exec-inbox/client";
import { scriptArgs } from "../scripts/lib/args";
import { agentClient, startAgentHost, startWranglerDev } from "../test/support/local-stack";
import { UNLIMITED_VARS } from "./lib/unlimited";
import { workerdRssMiB } from "./lib/workerd-rss";

const arg = scriptArgs(["minutes", "sessions", "retention-ms"]).number;
const MINUTES = arg("minutes", 3);
const SESSIONS = arg("sessions", 20);
const RETENTION_MS = arg("retention-ms", 5000);
const SAMPLE_MS = 10_000;

function sqliteBytes(dir: string): number {
  let total = 0;
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (full.includes("SessionObject") && entry.name.endsWith(".sqlite"))
        total += statSync(full).size;
    }
  };
  walk(dir);
  return total;
}

/** Whether the server answers 410: the job was there and retention removed it (a 404 is not). */
async function purged(pull: () => Promise<unknown>): Promise<boolean> {
  try {
    await pull();
    return false;
  } catch (error) {
    if (error instanceof ExecInboxError) return error.problem.status === 410;
    throw error;
  }
}

async function main(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-soak-"));
  const host = await startAgentHost();
  const dev = await startWranglerDev(stateDir, "any", {
    ...UNLIMITED_VARS,
    RESUME_URL_ALLOWLIST: "http://127.0.0.1:*",
    JOB_RETENTION_MS: String(RETENTION_MS),
  });
  const base = dev.base;
  const run = Date.now().toString(36);
  const counts = { requests: 0, errors: 0, cycles: 0 };
  const errors: string[] = [];

  const inbox = agentClient(base);

  /** Counts one request; a failure is counted and recorded, then ends the cycle it belongs to. */
  async function ok<T>(label: string, send: () => Promise<T>): Promise<T> {
    counts.requests += 1;
    try {
      return await send();
    } catch (error) {
      counts.errors += 1;
      if (errors.length < 10) errors.push(`${label} → ${String(error)}`);
      throw error;
    }
  }

  /** One agent session's life: reserve, suspend, complete, resume, claim, ack, finish, talk. */
  async function sessionLoop(index: number, until: number): Promise<void> {
    const sid = `soak-${run}-${index}`;
    await ok("create", () => inbox.createSession({ id: sid, resume_url: host.url }));
    for (let cycle = 0; Date.now() < until; cycle += 1) {
      try {
        await oneCycle(sid, cycle);
        counts.cycles += 1;
      } catch {
        // Counted and recorded by `ok`; the next cycle starts afresh.
      }
    }
  }

  async function oneCycle(sid: string, cycle: number): Promise<void> {
    const handle = `h${cycle}`;
    const reserved = await ok("reserve", () =>
      inbox.reserveJob(sid, { handle, command: `step ${cycle}` }),
    );
    const { run_id: runId } = await ok("register", () => inbox.registerRun(sid));
    await ok("suspend", () => inbox.suspend(sid, runId, { waiting_for: [handle] }));
    const result = {
      status: "completed",
      exit_code: 0,
      output: `output of step ${cycle} `.repeat(20),
    } as const;
    await ok("complete", () => postCompletion(reserved.callback, result));
    // The runner's retry: a duplicate.
    await ok("complete again", () => postCompletion(reserved.callback, result));
    const { run_id: resumed } = await ok("register resumed", () => inbox.registerRun(sid));
    const { claims } = await ok("claim", () => inbox.claim(sid));
    await ok("ack", () =>
      inbox.ack(sid, { ids: claims.map((claim) => claim.envelope.id).concat("env_none") }),
    );
    await ok("pull", () => inbox.getJob(sid, handle));
    await ok("append", () =>
      inbox.appendMessage(sid, { role: "user", content: `message ${cycle}` }),
    );
    await ok("finish", () => inbox.finishRun(sid, resumed));
    await ok("view", () => inbox.getSession(sid));
  }

  const started = Date.now();
  const until = started + MINUTES * 60_000;
  const samples: Array<{
    second: number;
    requests_per_second: number;
    errors: number;
    workerd_rss_mib: number;
    proxy_rss_mib: number;
    runtime_rss_mib: number;
  }> = [];
  const devPort = new URL(base).port;
  const rssSample = () => {
    const rss = workerdRssMiB(dev.pid(), devPort);
    return {
      workerd_rss_mib: rss.proxy + rss.runtime,
      proxy_rss_mib: rss.proxy,
      runtime_rss_mib: rss.runtime,
    };
  };
  let lastRequests = 0;
  const sampler = (async () => {
    while (Date.now() < until) {
      await sleep(SAMPLE_MS);
      const requests = counts.requests;
      samples.push({
        second: Math.round((Date.now() - started) / 1000),
        requests_per_second: Math.round(((requests - lastRequests) * 1000) / SAMPLE_MS),
        errors: counts.errors,
        ...rssSample(),
      });
      lastRequests = requests;
      console.log(JSON.stringify(samples.at(-1)));
    }
  })();
  await Promise.all([
    ...Array.from({ length: SESSIONS }, (_, i) => sessionLoop(i, until)),
    sampler,
  ]);

  // Retention: after it passes, old jobs and acked envelopes must really be gone.
  await sleep(RETENTION_MS + 3000);
  let jobsKept = 0;
  let ackedKept = 0;
  let purgedPulls = 0;
  for (let index = 0; index < SESSIONS; index += 1) {
    const sid = `soak-${run}-${index}`;
    jobsKept += (await inbox.listJobs(sid)).jobs.length;
    ackedKept += (await inbox.inbox(sid)).acked;
    if (await purged(() => inbox.getJob(sid, "h0"))) purgedPulls += 1;
  }
  const seconds = (Date.now() - started) / 1000;
  const rss = samples.map((sample) => sample.workerd_rss_mib);
  const first = samples[0];
  const last = samples.at(-1);
  const half = Math.floor(rss.length / 2);
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  console.log(
    JSON.stringify({
      minutes: MINUTES,
      sessions: SESSIONS,
      cycles: counts.cycles,
      completions: counts.cycles * 2,
      requests: counts.requests,
      requests_per_second: Math.round(counts.requests / (MINUTES * 60)),
      errors: counts.errors,
      error_rate: counts.errors / Math.max(1, counts.requests),
      workerd_rss_mib_first_half_mean: Math.round(mean(rss.slice(0, half))),
      workerd_rss_mib_second_half_mean: Math.round(mean(rss.slice(half))),
      proxy_rss_mib_first_last: [first?.proxy_rss_mib, last?.proxy_rss_mib],
      runtime_rss_mib_first_last: [first?.runtime_rss_mib, last?.runtime_rss_mib],
      jobs_stored_after_retention: jobsKept,
      acked_envelopes_stored_after_retention: ackedKept,
      first_job_pull_is_410_in_sessions: purgedPulls,
      sqlite_bytes_per_session: Math.round(sqliteBytes(stateDir) / SESSIONS),
      seconds: Math.round(seconds),
    }),
  );
  if (errors.length > 0) console.error(errors.join("\n"));
  await dev.stop();
  await host.close();
  rmSync(stateDir, { recursive: true, force: true });
  if (counts.errors > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
