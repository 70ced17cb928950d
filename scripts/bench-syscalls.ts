// `npm run bench:syscalls`, also part of `npm run bench`: the durable writes (fsync calls, read with
// strace) a wake costs on workerd, against the floor Worker's one-row commit; and, as an
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
import { startArrivalsHost, wallNow } from "./lib/arrivals-host";
import {
  buildWorker,
  type ServedWorker,
  serveExecInbox,
  serveFloorWorker,
} from "./lib/miniflare-stack";
import { settle } from "./lib/proc";
import { say, table } from "./lib/report";
import { percentile } from "./lib/stats";
import { execInboxSystem } from "./lib/wake-systems";

const SAMPLES = 100;

/** strace's counts of fsync and pwrite64 by `pids` while `work` runs. */
async function syscallsDuring(pids: readonly number[], work: () => Promise<void>) {
  const output: string[] = [];
  const tracer = spawn(
    "strace",
    [
      "-f",
      "-c",
      "-e",
      "trace=fsync,fdatasync,pwrite64",
      ...pids.flatMap((pid) => ["-p", String(pid)]),
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  tracer.stderr.on("data", (chunk) => output.push(String(chunk)));
  await new Promise((done) => setTimeout(done, 1000));
  await work();
  await new Promise((done) => setTimeout(done, 300));
  tracer.kill("SIGINT");
  await new Promise((done) => tracer.once("exit", done));
  const count = (name: string) =>
    Number(new RegExp(`(\\d+)(?:\\s+\\d+)?\\s+${name}\\s*$`, "m").exec(output.join(""))?.[1] ?? 0);
  return { fsync: count("fsync") + count("fdatasync"), pwrite: count("pwrite64") };
}

/** The built Worker with `armAlarmInBackground` made a no-op: an experiment, never a deployment. */
function withoutAlarmArming(script: string): string | null {
  const source = readFileSync(script, "utf8");
  const marker = "armAlarmInBackground() {";
  if (!source.includes(marker)) return null;
  const dir = ".bench/exec-inbox-no-alarm";
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(join(script, ".."))) {
    if (file.endsWith(".sql")) copyFileSync(join(script, "..", file), join(dir, file));
  }
  writeFileSync(join(dir, "index.js"), source.replace(marker, `${marker} return;`));
  return join(dir, "index.js");
}

async function wakes(script: string, index: "on" | "off", state: string) {
  const host = await startArrivalsHost();
  const served: ServedWorker = await serveExecInbox(script, state, { INDEX_UPDATES: index });
  try {
    const system = execInboxSystem("syscalls", served.directBase, host, () => served.pids);
    const keys = await system.prepare("s", SAMPLES + 10);
    for (const key of keys.slice(0, 10)) {
      await system.wake(key);
      await system.resumedAt(key);
    }
    await settle(() => served.pids);
    const latencies: number[] = [];
    const counts = await syscallsDuring(served.pids, async () => {
      for (const key of keys.slice(10)) {
        const t0 = wallNow();
        await system.wake(key);
        latencies.push((await system.resumedAt(key)) - t0);
      }
    });
    return { ...counts, p50: percentile(latencies, 50) };
  } finally {
    await served.stop();
    await host.close();
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
    const floorCounts = await syscallsDuring(floor.pids, async () => {
      for (let i = 0; i < SAMPLES; i += 1)
        await (await fetch(`${floor.directBase}/write?o=s`)).text();
    });
    await floor.stop();
    const rows: string[][] = [
      [
        "floor Worker: object call committing one row",
        (floorCounts.fsync / SAMPLES).toFixed(2),
        (floorCounts.pwrite / SAMPLES).toFixed(2),
        "–",
      ],
    ];
    const variants: Array<[string, string | null, "on" | "off"]> = [
      ["exec-inbox wake, index on", script, "on"],
      ["exec-inbox wake, index off", script, "off"],
      [
        "experiment: index off, alarm arming cut out (loses the durable fallback)",
        withoutAlarmArming(script),
        "off",
      ],
    ];
    for (const [name, build, index] of variants) {
      if (build === null) continue;
      const figures = await wakes(build, index, join(state, name.replace(/\W+/g, "-")));
      rows.push([
        name,
        (figures.fsync / SAMPLES).toFixed(2),
        (figures.pwrite / SAMPLES).toFixed(2),
        figures.p50.toFixed(2),
      ]);
    }
    table(
      [
        `one run of ${SAMPLES} sequential calls`,
        "fsync per call",
        "pwrite64 per call",
        "send → resumed p50 (ms)",
      ],
      rows,
    );
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
