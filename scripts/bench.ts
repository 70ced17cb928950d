// `npm run bench [-- --quick]`: ingest, wake latency, the runtime's floor and cost per completion of
// exec-inbox under the real wrangler dev, printed as median / p99 / runs and as ratios to the floor.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { benchIndex } from "./bench-index";
import { api, freePort, startWranglerDev } from "./lib/local-stack";
import { startRestatePeer } from "./lib/restate-peer";

const quick = process.argv.includes("--quick");
const scale = (full: number, small: number): number => (quick ? small : full);

interface Figures {
  readonly runs: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN);

/** Runs `count` calls with `concurrency` in flight and times each one. */
async function load(
  count: number,
  concurrency: number,
  call: (i: number) => Promise<unknown>,
): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t0 = performance.now();
        await call(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    runs: count,
    perSecond: count / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

const rows: string[] = [];
function report(name: string, figures: Figures, floor?: Figures): void {
  const ratio =
    floor === undefined
      ? ""
      : ` | ${(figures.perSecond / floor.perSecond).toFixed(2)}× rate, ${(figures.p50 / floor.p50).toFixed(2)}× p50`;
  const line = `| ${name} | ${figures.runs} | ${figures.perSecond.toFixed(0)}/s | ${figures.p50.toFixed(1)} ms | ${figures.p99.toFixed(1)} ms${ratio} |`;
  rows.push(line);
  console.log(line);
}

async function main(): Promise<void> {
  const workerd = JSON.parse(readFileSync("node_modules/workerd/package.json", "utf8")).version;
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model}), node ${process.version}, workerd ${workerd}, mode ${quick ? "quick" : "full"}`,
  );
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-bench-"));
  const arrivals = new Map<string, number>();
  const host = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const payload = JSON.parse(body) as { session_id: string };
      if (!arrivals.has(payload.session_id)) arrivals.set(payload.session_id, performance.now());
      response.writeHead(204).end();
    });
  });
  const hostPort = await freePort();
  await new Promise<void>((resolve) => host.listen(hostPort, "127.0.0.1", resolve));
  const dev = await startWranglerDev(stateDir, await freePort(), {
    RESUME_URL_ALLOWLIST: "http://127.0.0.1:*",
  });
  const base = dev.base;
  const resumeUrl = `http://127.0.0.1:${hostPort}/resume`;
  const run = Date.now().toString(36);
  const FIXED = 8;
  const WAKE_SIZES = quick ? [1, 10, 100] : [1, 10, 100, 300];
  const SATURATION = 64;

  const get = async (path: string) => {
    const response = await fetch(`${base}${path}`);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
  };
  // Warm both paths so start-up cost is not measured.
  await load(200, FIXED, () => get("/healthz"));
  await load(200, FIXED, () => get("/healthz/object"));

  console.log(
    "\n| load | runs | rate | p50 | p99 | vs floor |\n| --- | --- | --- | --- | --- | --- |",
  );
  const n = scale(4000, 800);
  const floorFixed = await load(n, FIXED, () => get("/healthz"));
  report(`no-op route, concurrency ${FIXED}`, floorFixed);
  const floorSat = await load(n, SATURATION, () => get("/healthz"));
  report(`no-op route, concurrency ${SATURATION}`, floorSat);
  const objectFixed = await load(n, FIXED, () => get("/healthz/object"));
  report(`no-op Durable Object call, concurrency ${FIXED}`, objectFixed, floorFixed);
  const objectSat = await load(n, SATURATION, () => get("/healthz/object"));
  report(`no-op Durable Object call, concurrency ${SATURATION}`, objectSat, floorSat);

  /** Reserves `jobs` handles in each of `sessions` fresh sessions; returns the completion calls. */
  async function prepare(label: string, sessions: number, jobs: number) {
    const calls: Array<{ sid: string; path: string; token: string }> = [];
    for (let s = 0; s < sessions; s += 1) {
      const sid = `bench-${run}-${label}-${s}`;
      await api(base, "POST", "/v1/sessions", { id: sid, resume_url: resumeUrl });
      await Promise.all(
        Array.from({ length: jobs }, async (_, j) => {
          const reserved = await api(base, "POST", `/v1/sessions/${sid}/exec-jobs`, {
            handle: `j${j}`,
            command: `job ${j}`,
          });
          calls.push({
            sid,
            path: `/v1/sessions/${sid}/exec-jobs/j${j}/completion`,
            token: reserved.body.callback.token,
          });
        }),
      );
    }
    return calls;
  }
  const statsOf = async (sid: string) => (await api(base, "GET", `/v1/sessions/${sid}/stats`)).body;
  let cost: Record<string, number> | undefined;
  async function ingest(
    label: string,
    sessions: number,
    jobs: number,
    concurrency: number,
    floor: Figures,
  ) {
    const calls = await prepare(label, sessions, jobs);
    const sid = calls[0]?.sid ?? "";
    const before = sessions === 1 ? await statsOf(sid) : undefined;
    const figures = await load(calls.length, concurrency, async (i) => {
      const call = calls[i];
      if (call === undefined) return;
      const answer = await api(
        base,
        "POST",
        call.path,
        { status: "completed", exit_code: 0, output: `output ${i}` },
        call.token,
      );
      if (answer.status !== 202) throw new Error(`completion: ${answer.status}`);
    });
    if (before !== undefined && cost === undefined) {
      // Read at once, before the idle object can be evicted (its counters live in memory).
      const after = await statsOf(sid);
      cost = {
        completions: calls.length,
        rows_read: (after.rows_read - before.rows_read) / calls.length,
        rows_written: (after.rows_written - before.rows_written) / calls.length,
        stored_bytes: (after.database_bytes - before.database_bytes) / calls.length,
        alarms: (after.alarms - before.alarms) / calls.length,
      };
    }
    report(`ingest ${sessions} session × ${jobs} jobs, concurrency ${concurrency}`, figures, floor);
    return calls;
  }
  const oneN = scale(1000, 200);
  await ingest("one-fixed", 1, oneN, FIXED, floorFixed);
  await ingest("one-sat", 1, oneN, SATURATION, floorSat);
  const K = 100;
  const perSession = scale(10, 3);
  await ingest("many-fixed", K, perSession, FIXED, floorFixed);
  await ingest("many-sat", K, perSession, SATURATION, floorSat);

  // Wake latency: completion POST leaves the client → signed resume arrives at the agent host.
  console.log(
    "\n| wake | sessions | p50 | p99 | completions or resolutions /s |\n| --- | --- | --- | --- | --- |",
  );
  const wakes = new Map<number, Figures>();
  for (const sessions of WAKE_SIZES) {
    const label = `wake-${sessions}`;
    const calls = await prepare(label, sessions, 1);
    for (const call of calls) {
      const runId = (await api(base, "POST", `/v1/sessions/${call.sid}/runs`, {})).body.run_id;
      await api(base, "POST", `/v1/sessions/${call.sid}/runs/${runId}/suspend`, {
        waiting_for: ["j0"],
      });
    }
    const sent = new Map<string, number>();
    const rate = await load(calls.length, FIXED, async (i) => {
      const call = calls[i];
      if (call === undefined) return;
      sent.set(call.sid, performance.now());
      await api(
        base,
        "POST",
        call.path,
        { status: "completed", exit_code: 0, output: "x" },
        call.token,
      );
    });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && calls.some((call) => !arrivals.has(call.sid))) await sleep(20);
    const latencies = calls
      .map((call) => (arrivals.get(call.sid) ?? Number.NaN) - (sent.get(call.sid) ?? 0))
      .sort((a, b) => a - b);
    const figures = {
      runs: sessions,
      perSecond: rate.perSecond,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
    };
    wakes.set(sessions, figures);
    console.log(
      `| exec-inbox: completion → signed resume at the host | ${sessions} | ${figures.p50.toFixed(1)} ms | ${figures.p99.toFixed(1)} ms | ${figures.perSecond.toFixed(0)} |`,
    );
  }

  // The same shape on Restate: a suspended handler per session, resolved over HTTP ingress.
  const peer = await startRestatePeer();
  for (const sessions of WAKE_SIZES) {
    const keys = Array.from({ length: sessions }, (_, i) => `bench-${run}-${sessions}-${i}`);
    const ids = await Promise.all(keys.map((key) => peer.start(key)));
    await sleep(300); // let every handler suspend
    const latencies: number[] = [];
    const rate = await load(keys.length, FIXED, async (i) => {
      const t0 = performance.now();
      const resolved = await peer.resolve(keys[i] ?? "", ids[i] ?? "");
      resolved.resumed.then((at) => latencies.push(at - t0));
    });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && latencies.length < sessions) await sleep(20);
    latencies.sort((a, b) => a - b);
    const figures = {
      runs: sessions,
      perSecond: rate.perSecond,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
    };
    const ours = wakes.get(sessions);
    console.log(
      `| Restate: resolve → handler resumed | ${sessions} | ${figures.p50.toFixed(1)} ms | ${figures.p99.toFixed(1)} ms | ${figures.perSecond.toFixed(0)} |`,
    );
    if (ours !== undefined) {
      console.log(
        `| ratio exec-inbox / Restate | ${sessions} | ${(ours.p50 / figures.p50).toFixed(2)}× | ${(ours.p99 / figures.p99).toFixed(2)}× | ${(ours.perSecond / figures.perSecond).toFixed(2)}× |`,
      );
    }
  }
  await peer.stop();

  console.log(`restate handler errors logged (retried by Restate): ${peer.handlerErrors()}`);

  // Cost per completion (one session, idle, so one resume for the batch; counters read around it).
  if (cost !== undefined) {
    // Prices: developers.cloudflare.com/durable-objects/platform/pricing (read 2026-11-30), Workers Paid,
    // beyond the included amounts: $0.15 per million requests (alarm invocations included),
    // $1.00 per million rows written, $0.001 per million rows read, $0.20 per GB-month stored.
    const requests = 1 + (cost.alarms ?? 0);
    const perMillion = {
      requests: requests * 0.15,
      rows_written: (cost.rows_written ?? 0) * 1.0,
      rows_read: (cost.rows_read ?? 0) * 0.001,
      storage_month: (((cost.stored_bytes ?? 0) * 1e6) / 1e9) * 0.2,
    };
    const total = Object.values(perMillion).reduce((a, b) => a + b, 0);
    console.log(`\ncost per completion (${cost.completions} completions into one session):`);
    console.log(JSON.stringify({ durable_object_requests: requests, ...cost }));
    console.log(
      `USD per million completions (beyond free tiers; duration not included): ${JSON.stringify(perMillion)} → ${total.toFixed(2)}`,
    );
  }

  await dev.stop();
  host.close();
  rmSync(stateDir, { recursive: true, force: true });

  // Completion latency with the session index off and on, each on its own wrangler dev.
  await benchIndex(quick);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
