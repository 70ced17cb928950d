// `npm run bench:index [-- --quick]`, also the last part of `npm run bench`: completion latency under
// the real wrangler dev with the session index off (INDEX_UPDATES=off) and on, in alternating phases,
// and what the index costs per completion (object SQLite rows, D1 rows).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { api, devVar, freePort, startAgentHost, startWranglerDev } from "./lib/local-stack";

/** Handles each session waits on: every completion changes its entry (fewer handles, more inbox). */
const HANDLES_PER_SESSION = 50;

interface Phase {
  readonly mode: "off" | "on";
  readonly samples: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly objectRowsWritten: number;
  readonly objectRowsRead: number;
  readonly indexRowsWritten: number;
  readonly listed: number;
  readonly latencies: readonly number[];
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function phase(mode: "off" | "on", samples: number, hostUrl: string): Promise<Phase> {
  const stateDir = mkdtempSync(join(tmpdir(), `exec-inbox-bench-index-${mode}-`));
  const dev = await startWranglerDev(stateDir, await freePort(), {
    INDEX_UPDATES: mode,
    RESUME_URL_ALLOWLIST: "http://127.0.0.1:*",
  });
  try {
    const base = dev.base;
    const sessions = Math.ceil((samples + HANDLES_PER_SESSION) / HANDLES_PER_SESSION);
    const calls: Array<{ sid: string; path: string; token: string }> = [];
    for (let s = 0; s < sessions; s += 1) {
      const sid = `bench-index-${mode}-${s}`;
      await api(base, "POST", "/v1/sessions", { id: sid, resume_url: hostUrl });
      const handles = Array.from({ length: HANDLES_PER_SESSION }, (_, j) => `j${j}`);
      for (const handle of handles) {
        const reserved = await api(base, "POST", `/v1/sessions/${sid}/exec-jobs`, {
          handle,
          command: `job ${handle}`,
        });
        calls.push({
          sid,
          path: `/v1/sessions/${sid}/exec-jobs/${handle}/completion`,
          token: reserved.body.callback.token,
        });
      }
      const runId = (await api(base, "POST", `/v1/sessions/${sid}/runs`, {})).body.run_id;
      await api(base, "POST", `/v1/sessions/${sid}/runs/${runId}/suspend`, {
        waiting_for: handles,
      });
    }
    const completeCall = async (index: number): Promise<number> => {
      const call = calls[index];
      if (call === undefined) throw new Error("out of completions");
      const t0 = performance.now();
      const answer = await api(
        base,
        "POST",
        call.path,
        { status: "completed", exit_code: 0, output: `output ${index}` },
        call.token,
      );
      const elapsed = performance.now() - t0;
      if (answer.status !== 202) throw new Error(`completion: ${answer.status}`);
      return elapsed;
    };
    // The first session warms the path (isolate start, first D1 statement) and is not measured.
    for (let i = 0; i < HANDLES_PER_SESSION; i += 1) await completeCall(i);
    const measuredSid = calls[HANDLES_PER_SESSION]?.sid ?? "";
    const before = (await api(base, "GET", `/v1/sessions/${measuredSid}/stats`)).body;
    const latencies: number[] = [];
    for (let i = HANDLES_PER_SESSION; i < HANDLES_PER_SESSION + samples; i += 1) {
      latencies.push(await completeCall(i));
    }
    // Let the last debounced index update land before the counters are read.
    await sleep(500);
    const after = (await api(base, "GET", `/v1/sessions/${measuredSid}/stats`)).body;
    const inMeasured = Math.min(samples, HANDLES_PER_SESSION);
    const listed = (
      await api(base, "GET", "/v1/ops/sessions?limit=500", undefined, devVar("OPERATOR_TOKENS"))
    ).body;
    latencies.sort((a, b) => a - b);
    return {
      mode,
      samples,
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      objectRowsWritten: (after.rows_written - before.rows_written) / inMeasured,
      objectRowsRead: (after.rows_read - before.rows_read) / inMeasured,
      indexRowsWritten: (after.index_rows_written - before.index_rows_written) / inMeasured,
      listed: listed.sessions.length,
      latencies,
    };
  } finally {
    await dev.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export async function benchIndex(
  quick: boolean,
  print: (line: string) => void = console.log,
): Promise<void> {
  const samples = quick ? 200 : 400;
  const modes: Array<"off" | "on"> = quick ? ["off", "on"] : ["off", "on", "off", "on"];
  const host = await startAgentHost(() => 204);
  const phases: Phase[] = [];
  try {
    for (const mode of modes) phases.push(await phase(mode, samples, host.url));
  } finally {
    await host.close();
  }
  print(
    "\n| index | sequential completions | p50 | p90 | p99 | object rows written / completion | object rows read / completion | D1 rows written / completion | sessions listed |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  );
  for (const p of phases) {
    print(
      `| ${p.mode} | ${p.samples} | ${p.p50.toFixed(2)} ms | ${p.p90.toFixed(2)} ms | ${p.p99.toFixed(2)} ms | ${p.objectRowsWritten.toFixed(2)} | ${p.objectRowsRead.toFixed(2)} | ${p.indexRowsWritten.toFixed(2)} | ${p.listed} |`,
    );
  }
  // Phases of one mode are pooled: alternating phases spread the machine's drift over both modes.
  const pooledP50 = (mode: "off" | "on") =>
    percentile(
      phases
        .filter((p) => p.mode === mode)
        .flatMap((p) => [...p.latencies])
        .sort((a, b) => a - b),
      50,
    );
  print(
    `completion p50 with the index / without: ${pooledP50("on").toFixed(2)} ms / ${pooledP50("off").toFixed(2)} ms = ${(pooledP50("on") / pooledP50("off")).toFixed(3)}×`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  benchIndex(process.argv.includes("--quick")).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
