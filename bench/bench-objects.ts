// `npm run bench:objects [-- BUILT.js]`: how many session objects one local workerd process holds
// open at once.
// Wakes sessions in rounds of 200 (16 in flight) until a request fails or 2,000 are open, printing
// the process's open files and resident memory after each round; then, idle, how long the runtime
// keeps them open; then the floor Worker's one-row objects, opened the same way, for comparison.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startArrivalsHost } from "./lib/arrivals-host";
import { buildWorker, serveExecInbox, serveFloorWorker } from "./lib/miniflare-stack";
import { openFiles, rssMiB } from "./lib/proc";
import { say, table } from "./lib/report";
import { execInboxSystem, pool } from "./lib/wake-systems";

const ROUND = 200;
const MOST = 2_000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function sessionObjects(script: string, state: string): Promise<void> {
  const host = await startArrivalsHost();
  const served = await serveExecInbox(script, state);
  const system = execInboxSystem("objects", served.directBase, host, () => served.pids);
  const rows: string[][] = [];
  try {
    for (let open = 0; open < MOST; open += ROUND) {
      let failure: string | null = null;
      try {
        const keys = await system.prepare(`r${open}`, ROUND);
        await pool(keys, 16, async (key) => {
          await system.wake(key);
          await system.resumedAt(key);
        });
      } catch (error) {
        failure = (error instanceof Error ? error.message : String(error)).slice(0, 200);
      }
      rows.push([
        `${open + 1}–${open + ROUND}`,
        failure ?? "all woken",
        String(openFiles(served.pids)),
        rssMiB(served.pids).toFixed(0),
      ]);
      if (failure !== null) break;
    }
    table(["session objects opened", "outcome", "open files", "RSS MiB"], rows);
    const idle: string[][] = [];
    let waited = 0;
    for (const seconds of [5, 10, 20, 40]) {
      await sleep((seconds - waited) * 1000);
      waited = seconds;
      idle.push([String(seconds), String(openFiles(served.pids))]);
    }
    table(["seconds idle after the last round", "open files"], idle);
  } finally {
    await served.stop();
    await host.close();
  }
}

async function floorObjects(state: string): Promise<void> {
  const floor = await serveFloorWorker(state);
  const rows: string[][] = [];
  try {
    for (let open = 0; open < (3 * MOST) / 2; open += 3 * ROUND) {
      let failed = 0;
      await pool(
        Array.from({ length: 3 * ROUND }, (_, i) => open + i),
        16,
        async (i) => {
          const answer = await fetch(`${floor.directBase}/write?o=objects-${i}`);
          await answer.arrayBuffer();
          if (!answer.ok) failed += 1;
        },
      );
      rows.push([
        `${open + 1}–${open + 3 * ROUND}`,
        `${failed} failed`,
        String(openFiles(floor.pids)),
        rssMiB(floor.pids).toFixed(0),
      ]);
    }
    table(["floor objects (one row each) opened", "outcome", "open files", "RSS MiB"], rows);
  } finally {
    await floor.stop();
  }
}

async function main(): Promise<void> {
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-objects-"));
  try {
    say("### Session objects open at once in one workerd process (`npm run bench:objects`)");
    // A built Worker to measure instead of this checkout's (an older build, for comparison).
    const script = process.argv[2] ?? buildWorker(".", ".bench/exec-inbox");
    say(`Session objects of \`${script}\`:`);
    await sessionObjects(script, join(state, "sessions"));
    await floorObjects(join(state, "floor"));
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
