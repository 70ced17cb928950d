// `npm run bench -- syscalls`, also part of `npm run bench`: the durable writes (fsync calls, read with
// strace) a wake costs on workerd and on Restate, one at a time and 16 in flight, against the floor
// Worker's one-row commit and its one-row commit that also moves the alarm; and, as an
// experiment, the same build with the alarm arming cut out (never served, only measured), to show
// what the alarm's writes cost. Needs strace; without it the section says so and is skipped.
import { execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WAKE_SETTLE_MS } from "../src/domain/index-entry";
import { startArrivalsHost, wallNow } from "./lib/arrivals-host";
import {
  buildWorker,
  type ServedWorker,
  serveExecInbox,
  serveFloorWorker,
} from "./lib/miniflare-stack";
import { settle } from "./lib/proc";
import { say, table } from "./lib/report";
import { startRestatePeer } from "./lib/restate-peer";
import { percentile } from "./lib/stats";
import { wakeOrder } from "./lib/wake-order";
import { execInboxSystem, pool, restateSystem, type WakeSystem } from "./lib/wake-systems";

const SAMPLES = 100;

/** strace's counts of fsync and pwrite64 by `pids` while `work` runs and for `tailMs` after it. */
async function syscallsDuring(pids: readonly number[], work: () => Promise<void>, tailMs = 300) {
  const output: string[] = [];
  const tracer = spawn(
    "strace",
    [
      "-f",
      "-c",
      // Wall time in each call: while workerd's one thread waits in fsync, no object runs.
      "-w",
      "-e",
      "trace=fsync,fdatasync,pwrite64",
      ...pids.flatMap((pid) => ["-p", String(pid)]),
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  tracer.stderr.on("data", (chunk) => output.push(String(chunk)));
  await new Promise((done) => setTimeout(done, 1000));
  await work();
  await new Promise((done) => setTimeout(done, tailMs));
  tracer.kill("SIGINT");
  await new Promise((done) => tracer.once("exit", done));
  // strace -c rows: % time, seconds, usecs/call, calls, [errors,] syscall.
  const row = (name: string) =>
    output
      .join("")
      .split("\n")
      .map((line) => line.trim().split(/\s+/))
      .find((cells) => cells.at(-1) === name);
  const count = (name: string) => Number(row(name)?.[3] ?? 0);
  const seconds = (name: string) => Number(row(name)?.[1] ?? 0);
  return {
    fsync: count("fsync") + count("fdatasync"),
    fsyncMs: (seconds("fsync") + seconds("fdatasync")) * 1000,
    pwrite: count("pwrite64"),
  };
}

/** The built Worker with the scheduler's `armInBackground` made a no-op: an experiment, never a deployment. */
function withoutAlarmArming(script: string): string | null {
  const source = readFileSync(script, "utf8");
  const marker = "armInBackground() {";
  if (!source.includes(marker)) return null;
  const dir = ".bench/exec-inbox-no-alarm";
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(join(script, ".."))) {
    if (file.endsWith(".sql")) copyFileSync(join(script, "..", file), join(dir, file));
  }
  writeFileSync(join(dir, "index.js"), source.replace(marker, `${marker} return;`));
  return join(dir, "index.js");
}

/**
 * Wakes SAMPLES sessions of `system`, one at a time or `concurrency` in flight, under strace until
 * `tailMs` after the last resume: what a wake writes later (the index's held entry) counts too.
 */
async function tracedWakes(system: WakeSystem, concurrency: number, tailMs?: number) {
  const keys = await system.prepare(`s${concurrency}`, SAMPLES + 10);
  for (const key of keys.slice(0, 10)) {
    await system.wake(key);
    await system.resumedAt(key);
  }
  await settle(system.pids);
  const latencies: number[] = [];
  const counts = await syscallsDuring(
    system.pids(),
    async () => {
      await pool(keys.slice(10), concurrency, async (key) => {
        const t0 = wallNow();
        await system.wake(key);
        latencies.push((await system.resumedAt(key)) - t0);
      });
    },
    tailMs,
  );
  return { ...counts, p50: concurrency === 1 ? percentile(latencies, 50) : Number.NaN };
}

async function execInboxWakes(
  script: string,
  index: "on" | "off",
  state: string,
  concurrency: number,
) {
  const host = await startArrivalsHost();
  const served: ServedWorker = await serveExecInbox(script, state, { INDEX_UPDATES: index });
  try {
    // Until a wake's held index entry went out and the alarm moved past its fallback.
    return await tracedWakes(
      execInboxSystem("syscalls", served.directBase, host, () => served.pids),
      concurrency,
      WAKE_SETTLE_MS + 1_500,
    );
  } finally {
    await served.stop();
    await host.close();
  }
}

async function restateWakes(concurrency: number) {
  const peer = await startRestatePeer();
  try {
    return await tracedWakes(restateSystem("syscalls", peer, false), concurrency);
  } finally {
    await peer.stop();
  }
}

export async function benchSyscalls(script: string): Promise<void> {
  say("### Durable writes per wake (strace, workerd direct)");
  try {
    execFileSync("strace", ["-V"], { stdio: "ignore" });
  } catch {
    say("strace is not installed: section skipped.");
    return;
  }
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-syscalls-"));
  try {
    const floor = await serveFloorWorker(join(state, "floor"));
    const floorCall = async (route: string) => {
      const latencies: number[] = [];
      const counts = await syscallsDuring(floor.pids, async () => {
        for (let i = 0; i < SAMPLES; i += 1) {
          const t0 = performance.now();
          await (await fetch(`${floor.directBase}/${route}?o=${route}`)).text();
          latencies.push(performance.now() - t0);
        }
      });
      return { ...counts, p50: percentile(latencies, 50) };
    };
    const floorRows: Array<[string, string]> = [
      ["floor Worker: object call committing one row", "write"],
      ["floor Worker: one row, and the alarm moved earlier in the same transaction", "write-arm"],
      [
        "floor Worker: one row, then the alarm moved earlier after the transaction",
        "write-then-arm",
      ],
    ];
    const rows: string[][] = [];
    for (const [name, route] of floorRows) {
      await (await fetch(`${floor.directBase}/${route}?o=${route}`)).text();
      const counts = await floorCall(route);
      rows.push([
        name,
        (counts.fsync / SAMPLES).toFixed(2),
        (counts.fsyncMs / SAMPLES).toFixed(2),
        (counts.pwrite / SAMPLES).toFixed(2),
        counts.p50.toFixed(2),
      ]);
    }
    await floor.stop();
    const cases: Array<
      [string, () => Promise<{ fsync: number; fsyncMs: number; pwrite: number; p50: number }>]
    > = [
      ["exec-inbox wake, index on", () => execInboxWakes(script, "on", join(state, "on"), 1)],
      ["exec-inbox wake, index off", () => execInboxWakes(script, "off", join(state, "off"), 1)],
      [
        "exec-inbox wake, index on, 16 in flight",
        () => execInboxWakes(script, "on", join(state, "on16"), 16),
      ],
      ["Restate HTTP/1.1 wake (restate-server and service)", () => restateWakes(1)],
      ["Restate HTTP/1.1 wake, 16 in flight", () => restateWakes(16)],
    ];
    const experiment = withoutAlarmArming(script);
    if (experiment !== null) {
      cases.push([
        "experiment: exec-inbox, index off, alarm arming cut out (loses the durable fallback)",
        () => execInboxWakes(experiment, "off", join(state, "no-alarm"), 1),
      ]);
    }
    for (const [name, run] of cases) {
      const figures = await run();
      rows.push([
        name,
        (figures.fsync / SAMPLES).toFixed(2),
        (figures.fsyncMs / SAMPLES).toFixed(2),
        (figures.pwrite / SAMPLES).toFixed(2),
        Number.isNaN(figures.p50) ? "–" : figures.p50.toFixed(2),
      ]);
    }
    table(
      [
        `one run of ${SAMPLES} calls (one at a time unless said)`,
        "fsync + fdatasync per call",
        "ms waiting in them per call",
        "pwrite64 per call",
        "p50 under strace (ms): floor call, or send → resumed",
      ],
      rows,
    );
    await wakeOrder(script, join(state, "order"));
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  benchSyscalls(buildWorker(".", ".bench/exec-inbox")).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
