// `npm run bench -- waiting [BUILT.js …] [--sessions N] [--repeat R] [--workflows] [--floor]
// [--touch N]`: the main run's "RSS per waiting session" alone, for one or more builds, and where
// it goes (`--touch`: then N requests to each that read no SQL, and what one adds). Each
// build (with `--workflows` the Workflows peer, with `--floor` the floor Worker's one-row objects)
// is served fresh on workerd direct, R times in turn; each time 220 sessions are woken one after
// another and 32 more 16 at a time, as the main run's sequential and concurrent phases do before
// it reads memory, then N sessions (400) are made to wait as the main run's concurrent phase does
// (bench/lib/measure.ts): the serving processes' resident growth per session. Then, in a fresh
// process that keeps idle objects open, N wait between two full GCs: their resident growth,
// SQLite's heap (bench/lib/sqlite-heap.ts), the isolate's live JavaScript heap per session, and
// the rest (the Workflows peer's objects close when idle, as in the main run).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentClient, freePort } from "../test/support/local-stack";
import { startArrivalsHost } from "./lib/arrivals-host";
import { isolateHeap } from "./lib/isolate-heap";
import { sequentialWakes } from "./lib/measure";
import {
  buildWorker,
  type ServedWorker,
  serveExecInbox,
  serveFloorWorker,
} from "./lib/miniflare-stack";
import { rssMiB, settle } from "./lib/proc";
import { say, table } from "./lib/report";
import { sqliteHeapOf } from "./lib/sqlite-heap";
import {
  durableWakeFloor,
  execInboxSystem,
  pool,
  type WakeSystem,
  workflowsSystem,
} from "./lib/wake-systems";
import { buildWorkflowsPeer, startWorkflowsPeer } from "./lib/workflows-peer";

let workflowsScript: string | undefined;
const WORKFLOWS_SCRIPT = () => {
  workflowsScript ??= buildWorkflowsPeer();
  return workflowsScript;
};

const flag = (name: string) => process.argv.indexOf(name);
const option = (name: string, fallback: number) =>
  flag(name) > 0 ? Number(process.argv[flag(name) + 1]) : fallback;
const SESSIONS = option("--sessions", 400);
const REPEAT = option("--repeat", 2);
const WORKFLOWS = flag("--workflows") > 0;
const FLOOR = flag("--floor") > 0;
/** Further requests per waiting session (`--touch N`), and what each adds. */
const TOUCH = option("--touch", 0);
const WARM = 32;
const KIB = 1024;

/** The given builds: the arguments that are neither options nor their values. */
function builds(): string[] {
  const valued = new Set(["--sessions", "--repeat", "--touch"]);
  const given = process.argv
    .slice(2)
    .filter((arg, i, all) => !arg.startsWith("--") && !valued.has(all[i - 1] ?? ""));
  return given.length > 0 ? given : [buildWorker(".", ".bench/exec-inbox")];
}

interface Served {
  readonly served: ServedWorker;
  readonly system: WakeSystem;
  /** One request to a waiting session that reads no SQL (exec-inbox's stats); absent elsewhere. */
  readonly touch?: (key: string) => Promise<void>;
  readonly inspectorPort: number;
  stop(): Promise<void>;
}

async function serve(script: string, state: string, preventEviction: boolean): Promise<Served> {
  const inspectorPort = await freePort();
  if (script === "floor") {
    // The floor Worker's objects: one table, one row, as a waiting session's object exists.
    const floor = await serveFloorWorker(state);
    const arrivals = await startArrivalsHost();
    return {
      served: floor,
      system: durableWakeFloor("floor", floor.directBase, arrivals, () => floor.pids),
      inspectorPort,
      stop: async () => {
        await floor.stop();
        await arrivals.close();
      },
    };
  }
  if (script === "workflows") {
    const peer = await startWorkflowsPeer(WORKFLOWS_SCRIPT(), state, { inspectorPort });
    const arrivals = await startArrivalsHost();
    const system = workflowsSystem("workflows", peer, peer.served.directBase, arrivals);
    return {
      served: peer.served,
      system,
      inspectorPort,
      stop: async () => {
        await peer.stop();
        await arrivals.close();
      },
    };
  }
  const served = await serveExecInbox(script, state, {}, { inspectorPort, preventEviction });
  const arrivals = await startArrivalsHost();
  const system = execInboxSystem("exec-inbox", served.directBase, arrivals, () => served.pids);
  const inbox = agentClient(served.directBase);
  return {
    served,
    system,
    touch: async (sid) => {
      await inbox.getSessionStats(sid);
    },
    inspectorPort,
    stop: async () => {
      await served.stop();
      await arrivals.close();
    },
  };
}

/**
 * Wakes 32 sessions, as the main run's concurrent phase does before it reads memory; `sequential`
 * first wakes 220 one after another, as its sequential phase does before that.
 */
async function warmUp(
  system: WakeSystem,
  pids: () => readonly number[],
  sequential = false,
): Promise<void> {
  if (sequential) await sequentialWakes(system, 200, 20);
  const warm = await system.prepare("warm", WARM);
  await pool(warm, 16, (key) => system.wake(key));
  await Promise.all(warm.map((key) => system.resumedAt(key)));
  await settle(pids);
}

const perSession = (mib: number) => (mib * KIB) / SESSIONS;

/**
 * As the main run: no GC forced, objects closing when idle, the growth while N come to wait. With
 * `--touch N`, then N requests to each that read no SQL: the resident growth per request.
 */
async function asMainRun(script: string, state: string): Promise<number[]> {
  const { served, system, touch, stop } = await serve(script, state, false);
  const pids = () => served.pids;
  try {
    await warmUp(system, pids, true);
    const before = rssMiB(pids());
    const keys = await system.prepare("a", SESSIONS);
    await settle(pids);
    const after = rssMiB(pids());
    if (TOUCH === 0 || touch === undefined) return [perSession(after - before), Number.NaN];
    for (let i = 0; i < TOUCH; i += 1) await pool(keys, 8, touch);
    await settle(pids);
    return [perSession(after - before), perSession(rssMiB(pids()) - after) / TOUCH];
  } finally {
    await stop();
  }
}

/**
 * Where it goes: N sessions made to wait between two full GCs of the isolate, in a process that
 * keeps idle objects open (a slow round must not lose its first ones): resident growth, SQLite's
 * heap, the live JavaScript heap, and the rest.
 */
async function breakdown(script: string, state: string): Promise<number[]> {
  const { served, system, inspectorPort, stop } = await serve(script, state, true);
  const pids = () => served.pids;
  // Miniflare names the user's Worker "core:user:<name>"; the Workflows engine's heap is not read.
  const javascript = async () => {
    try {
      const heap = await isolateHeap(
        inspectorPort,
        (target) => target.id?.startsWith("core:user:") === true,
      );
      return heap.usedMiB;
    } catch {
      return Number.NaN;
    }
  };
  try {
    await warmUp(system, pids);
    const jsBefore = await javascript();
    const sqlBefore = sqliteHeapOf(pids()) ?? Number.NaN;
    const rssBefore = rssMiB(pids());
    await system.prepare("b", SESSIONS);
    await settle(pids);
    const js = perSession((await javascript()) - jsBefore);
    const sqlite = ((sqliteHeapOf(pids()) ?? Number.NaN) - sqlBefore) / KIB / SESSIONS;
    const rss = perSession(rssMiB(pids()) - rssBefore);
    return [rss, sqlite, js, rss - sqlite - js];
  } finally {
    await stop();
  }
}

async function main(): Promise<void> {
  const scripts = [...builds(), ...(WORKFLOWS ? ["workflows"] : []), ...(FLOOR ? ["floor"] : [])];
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-waiting-"));
  const rows: string[][] = [];
  try {
    for (let round = 1; round <= REPEAT; round += 1) {
      for (const [i, script] of scripts.entries()) {
        const figures = [
          ...(await asMainRun(script, join(state, `${round}-${i}-a`))),
          ...(await breakdown(script, join(state, `${round}-${i}-b`))),
        ];
        rows.push([script, String(round), ...figures.map((kib) => kib.toFixed(0))]);
      }
    }
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
  say(`### KiB per waiting session (${SESSIONS} sessions made to wait, workerd direct)`);
  table(
    [
      "build",
      "round",
      "RSS (as the main run)",
      "RSS per further request",
      "RSS, objects kept open, after a GC",
      "SQLite heap",
      "live JS heap",
      "RSS − SQLite − JS",
    ],
    rows,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
