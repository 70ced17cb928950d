// `npm run bench -- binding [--quick]`: completion → agent woken, over a service binding (`wake()`)
// against the signed webhook, on the same runtime. exec-inbox's built Worker and
// the receiver Worker (bench/binding-receiver) run in one Miniflare/workerd; each wake's latency is
// from just before the completion POST to the receiver's clock when the wake landed, and CPU is
// the workerd processes' (/proc) over the whole loop, divided per wake.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { postCompletion } from "@exec-inbox/client";
import { convertV4MiniflareOptions, Miniflare, type V4MiniflareOptions } from "miniflare";
import { scriptArgs } from "../scripts/lib/args";
import { agentClient, devVar } from "../test/support/local-stack";
import { buildWorker, builtModules } from "./lib/miniflare-stack";
import { cpuSeconds, loadAverage, ownWorkerdPids, settle } from "./lib/proc";
import { say, table } from "./lib/report";
import { percentile } from "./lib/stats";

const HOOK = "http://receiver.test/hook";

async function main(): Promise<void> {
  const wakes = scriptArgs([]).quick ? 30 : 200;
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-bench-binding-"));
  const script = buildWorker(".", ".bench/exec-inbox");
  const before = new Set(ownWorkerdPids());
  const options: V4MiniflareOptions = {
    host: "127.0.0.1",
    port: 0,
    // Miniflare 5 keeps every resource under one root (`do/`, `d1/`, `r2/`, `workflows/` in it).
    resourcePersistencePath: stateDir,
    workers: [
      {
        name: "exec-inbox",
        ...builtModules(script),
        // Its own socket: requests skip Miniflare's entry worker, as in the rest of the benchmark.
        unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
        compatibilityDate: "2026-11-17",
        compatibilityFlags: ["nodejs_compat"],
        bindings: {
          AGENT_TOKENS: devVar("AGENT_TOKENS"),
          OPERATOR_TOKENS: devVar("OPERATOR_TOKENS"),
          CALLBACK_SECRETS: devVar("CALLBACK_SECRETS"),
          RESUME_SIGNING_SECRET: devVar("RESUME_SIGNING_SECRET"),
          RESUME_URL_ALLOWLIST: "http://receiver.test",
          RESUME_BINDING_ALLOWLIST: "RECEIVER",
          // The index is off in both modes: only the delivery differs between them.
          INDEX_UPDATES: "off",
        },
        durableObjects: { SESSIONS: { className: "SessionObject", useSQLite: true } },
        serviceBindings: { RECEIVER: { name: "receiver", entrypoint: "Receiver" } },
        // Webhooks (plain fetch) reach the receiver's fetch handler inside the same runtime.
        outboundService: "receiver",
      },
      {
        name: "receiver",
        modules: true,
        scriptPath: "bench/binding-receiver/worker.mjs",
        compatibilityDate: "2026-11-17",
        bindings: { RESUME_SIGNING_SECRET: devVar("RESUME_SIGNING_SECRET") },
      },
    ],
  };
  const miniflare = new Miniflare(convertV4MiniflareOptions(options));
  await miniflare.ready;
  const base = (await miniflare.unsafeGetDirectURL("exec-inbox")).origin;
  const pids = ownWorkerdPids().filter((pid) => !before.has(pid));
  const receiver = await miniflare.getWorker("receiver");
  /** When each session's wake landed, by the receiver's clock; waits for `sid`'s (long-poll). */
  const received = async (sid = ""): Promise<Record<string, number>> =>
    (await (await receiver.fetch(`http://receiver/_received?sid=${sid}`)).json()) as Record<
      string,
      number
    >;
  const inbox = agentClient(base);

  type Mode = "binding" | "webhook";
  /** A session suspended on one job, woken through `mode` when the job completes. */
  async function suspended(mode: Mode, sid: string) {
    await inbox.createSession(
      mode === "binding" ? { id: sid, resume_binding: "RECEIVER" } : { id: sid, resume_url: HOOK },
    );
    const { callback } = await inbox.reserveJob(sid, { handle: "h", command: "make" });
    const { run_id } = await inbox.registerRun(sid, {});
    await inbox.suspend(sid, run_id, { waiting_for: ["h"] });
    return { mode, sid, callback };
  }

  /**
   * `count` wakes each way, alternating binding and webhook, one at a time: both modes share the
   * machine's noise (other processes). CPU is read around each wake and summed per mode.
   */
  async function loop(count: number) {
    const tag = Date.now().toString(36);
    const sessions: Awaited<ReturnType<typeof suspended>>[] = [];
    for (let i = 0; i < count; i += 1) {
      for (const mode of ["binding", "webhook"] as const) {
        sessions.push(await suspended(mode, `${mode}-${tag}-${i}`));
      }
    }
    await settle(() => pids);
    const result = {
      binding: { latencies: [] as number[], cpu: 0 },
      webhook: { latencies: [] as number[], cpu: 0 },
    };
    for (const session of sessions) {
      const cpu0 = cpuSeconds(pids);
      const sent = Date.now();
      await postCompletion(session.callback, { status: "completed", exit_code: 0, output: "done" });
      const landed = (await received(session.sid))[session.sid];
      if (landed === undefined) throw new Error(`${session.sid} was never woken`);
      // The resume's delivery record commits after the wake: let it, so the next wake starts clean.
      await sleep(5);
      result[session.mode].cpu += cpuSeconds(pids) - cpu0;
      result[session.mode].latencies.push(landed - sent);
    }
    return result;
  }

  try {
    say(`npm run bench -- binding: ${wakes} wakes each way, one at a time; load ${loadAverage()}`);
    await loop(10);
    const measured = await loop(wakes);
    const rows = (["binding", "webhook"] as const).map((mode) => [
      mode,
      `${percentile(measured[mode].latencies, 50)} ms`,
      `${percentile(measured[mode].latencies, 95)} ms`,
      `${((measured[mode].cpu * 1000) / wakes).toFixed(2)} ms`,
    ]);
    table(["wake", "p50 completion → woken", "p95", "workerd CPU per completion + wake"], rows);
  } finally {
    await miniflare.dispose();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
