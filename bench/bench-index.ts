// `npm run bench -- index [--quick]`, also the last part of `npm run bench`: completion latency under
// the real wrangler dev with the session index off (INDEX_UPDATES=off) and on, in alternating phases,
// and what the index costs per completion (object SQLite rows, D1 rows).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { type Callback, postCompletion } from "@exec-inbox/client";
import { ExecInboxOperatorClient } from "@exec-inbox/client/operator";
import { scriptArgs } from "../scripts/lib/args";
import { agentClient, devVar, startAgentHost, startWranglerDev } from "../test/support/local-stack";
import { percentile } from "./lib/stats";
import { UNLIMITED_VARS } from "./lib/unlimited";

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

async function phase(mode: "off" | "on", samples: number, hostUrl: string): Promise<Phase> {
  const stateDir = mkdtempSync(join(tmpdir(), `exec-inbox-bench-index-${mode}-`));
  const dev = await startWranglerDev(stateDir, "any", {
    ...UNLIMITED_VARS,
    INDEX_UPDATES: mode,
    RESUME_URL_ALLOWLIST: "http://127.0.0.1:*",
  });
  try {
    const base = dev.base;
    const sessions = Math.ceil((samples + HANDLES_PER_SESSION) / HANDLES_PER_SESSION);
    const inbox = agentClient(base);
    const calls: Array<{ sid: string; callback: Callback }> = [];
    for (let s = 0; s < sessions; s += 1) {
      const sid = `bench-index-${mode}-${s}`;
      await inbox.createSession({ id: sid, resume_url: hostUrl });
      const handles = Array.from({ length: HANDLES_PER_SESSION }, (_, j) => `j${j}`);
      for (const handle of handles) {
        const reserved = await inbox.reserveJob(sid, { handle, command: `job ${handle}` });
        calls.push({ sid, callback: reserved.callback });
      }
      const { run_id: runId } = await inbox.registerRun(sid);
      await inbox.suspend(sid, runId, { waiting_for: handles });
    }
    const completeCall = async (index: number): Promise<number> => {
      const call = calls[index];
      if (call === undefined) throw new Error("out of completions");
      const t0 = performance.now();
      await postCompletion(call.callback, {
        status: "completed",
        exit_code: 0,
        output: `output ${index}`,
      });
      return performance.now() - t0;
    };
    // The first session warms the path (isolate start, first D1 statement) and is not measured.
    for (let i = 0; i < HANDLES_PER_SESSION; i += 1) await completeCall(i);
    const measuredSid = calls[HANDLES_PER_SESSION]?.sid ?? "";
    const before = await inbox.getSessionStats(measuredSid);
    const latencies: number[] = [];
    for (let i = HANDLES_PER_SESSION; i < HANDLES_PER_SESSION + samples; i += 1) {
      latencies.push(await completeCall(i));
    }
    // Let the last debounced index update land before the counters are read.
    await sleep(500);
    const after = await inbox.getSessionStats(measuredSid);
    const inMeasured = Math.min(samples, HANDLES_PER_SESSION);
    const operator = new ExecInboxOperatorClient({
      baseUrl: base,
      token: devVar("OPERATOR_TOKENS"),
    });
    const listed = await operator.listSessions({ limit: 500 });
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
  benchIndex(scriptArgs([]).quick).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
