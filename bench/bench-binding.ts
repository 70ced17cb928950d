// `npm run bench:binding [-- --quick]`: completion → agent woken, over a service binding (`wake()`)
// against the signed webhook, on the same runtime (issue 26, item 6). exec-inbox's built Worker and
// the receiver Worker (bench/binding-receiver) run in one Miniflare/workerd; each wake's latency is
// from just before the completion POST to the receiver's clock when the wake landed, and CPU is
// the workerd processes' (/proc) over the whole loop, divided per wake.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Miniflare, type MiniflareOptions } from "miniflare";
import { postCompletion } from "../client";
import { scriptArgs } from "../scripts/lib/args";
import { agentClient, devVar } from "../test/support/local-stack";
import { buildWorker } from "./lib/miniflare-stack";
import { cpuSeconds, loadAverage, ownWorkerdPids, settle } from "./lib/proc";
import { say, table } from "./lib/report";
import { percentile } from "./lib/stats";

const HOOK = "http://receiver.test/hook";

async function main(): Promise<void> {
  const wakes = scriptArgs([]).quick ? 30 : 200;
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-bench-binding-"));
  const script = buildWorker(".", ".bench/exec-inbox");
  const before = new Set(ownWorkerdPids());
  const options: MiniflareOptions = {
    host: "127.0.0.1",
    port: 0,
    workers: [
      {
        name: "exec-inbox",
        modules: true,
        scriptPath: script,
        // Its own socket: requests skip Miniflare's entry worker, as in the rest of the benchmark.
        unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
        modulesRules: [{ type: "Text", include: ["**/*.sql"] }],
        compatibilityDate: "2026-04-15",
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
        durableObjectsPersist: join(stateDir, "do"),
        serviceBindings: { RECEIVER: { name: "receiver", entrypoint: "Receiver" } },
        // Webhooks (plain fetch) reach the receiver's fetch handler inside the same runtime.
        outboundService: "receiver",
      },
      {
        name: "receiver",
        modules: true,
        scriptPath: "bench/binding-receiver/worker.mjs",
        compatibilityDate: "2026-04-15",
        bindings: { RESUME_SIGNING_SECRET: devVar("RESUME_SIGNING_SECRET") },
      },
    ],
  };
  const miniflare = new Miniflare(options);
  await miniflare.ready;
  const base = (await miniflare.unsafeGetDirectURL("exec-inbox")).origin;
  const pids = ownWorkerdPids().filter((pid) => !before.has(pid));
  const receiver = await miniflare.getWorker("receiver");
  const received = async (): Promise<Record<string, number>> =>
    (await (await receiver.fetch("http://receiver/_received")).json()) as Record<string, number>;
  const inbox = agentClient(base);

  /** `count` sessions suspended on one job each, then their completions one at a time. */
  async function loop(mode: "binding" | "webhook", count: number) {
    const tag = `${mode}-${Date.now().toString(36)}`;
    const sessions: Array<{ sid: string; callback: { url: string; token: string } }> = [];
    for (let i = 0; i < count; i += 1) {
      const sid = `${tag}-${i}`;
      await inbox.createSession(
        mode === "binding"
          ? { id: sid, resume_binding: "RECEIVER" }
          : { id: sid, resume_url: HOOK },
      );
      const { callback } = await inbox.reserveJob(sid, { handle: "h", command: "make" });
      const { run_id } = await inbox.registerRun(sid, {});
      await inbox.suspend(sid, run_id, { waiting_for: ["h"] });
      sessions.push({ sid, callback });
    }
    await settle(() => pids);
    const cpu0 = cpuSeconds(pids);
    const sent = new Map<string, number>();
    for (const session of sessions) {
      sent.set(session.sid, Date.now());
      await postCompletion(session.callback, { status: "completed", exit_code: 0, output: "done" });
      // One at a time: wait for this wake before the next completion, so wakes never overlap.
      for (let waited = 0; (await received())[session.sid] === undefined; waited += 1) {
        if (waited > 2000) throw new Error(`${session.sid} was never woken`);
        await sleep(1);
      }
    }
    const cpu = cpuSeconds(pids) - cpu0;
    const landed = await received();
    const latencies = sessions.map((s) => (landed[s.sid] ?? Number.NaN) - (sent.get(s.sid) ?? 0));
    return { latencies, cpuMsPerWake: (cpu * 1000) / count };
  }

  try {
    say(`bench:binding — ${wakes} wakes each way, one at a time; load ${loadAverage()}`);
    await loop("binding", 10);
    await loop("webhook", 10);
    const rows: string[][] = [];
    for (const mode of ["binding", "webhook"] as const) {
      const { latencies, cpuMsPerWake } = await loop(mode, wakes);
      rows.push([
        mode,
        `${percentile(latencies, 50)} ms`,
        `${percentile(latencies, 95)} ms`,
        `${cpuMsPerWake.toFixed(2)} ms`,
      ]);
    }
    table(["wake", "p50 completion → woken", "p95", "workerd CPU per completion + wake"], rows);
  } finally {
    await miniflare.dispose();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
