// `npm run bench [-- --quick]`: exec-inbox's wake against Restate's and Cloudflare Workflows', on the
// runtimes exec-inbox runs on locally (wrangler dev; the built Worker on workerd through Miniflare's
// API, with and without its entry worker), beside the runtime's floors, with cost and a table of
// semantics measured by running each case, and what heartbeats cost (bench/bench-heartbeats.ts).
// Writes the budget table and the comparison's tables into docs/benchmarks.md (between its
// results markers), and every section of the run to .bench/; the tables' layout is in
// bench/budget-table.ts and bench/bench-tables.ts.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, hostname, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { scriptArgs } from "../scripts/lib/args";
import { agentClient, startWranglerDev } from "../test/support/local-stack";
import { measureCommandPaths } from "./bench-commands";
import { benchHeartbeats } from "./bench-heartbeats";
import { benchIndex } from "./bench-index";
import { benchSandbox } from "./bench-sandbox";
import { benchSemantics } from "./bench-semantics";
import { benchSyscalls } from "./bench-syscalls";
import { printTables, SYSTEM } from "./bench-tables";
import { printBudget } from "./budget-table";
import { printCommands } from "./command-table";
import { startArrivalsHost } from "./lib/arrivals-host";
import { cycleRows, floorWakeRows } from "./lib/cycle-rows";
import { concurrentWakes, type Figures, floorOf, sequentialWakes } from "./lib/measure";
import { buildWorker, serveExecInbox, serveFloorWorker } from "./lib/miniflare-stack";
import { loadAverage, processTree } from "./lib/proc";
import { mark, saidSince, say, Tally, writeReport } from "./lib/report";
import { startRestatePeer } from "./lib/restate-peer";
import { writeResults } from "./lib/results-block";
import { UNLIMITED_VARS } from "./lib/unlimited";
import {
  durableWakeFloor,
  execInboxSystem,
  type FloorSystem,
  floorSystem,
  restateSystem,
  type WakeSystem,
  workflowsSystem,
} from "./lib/wake-systems";
import { buildWorkflowsPeer, startWorkflowsPeer } from "./lib/workflows-peer";

const quick = scriptArgs([]).quick;
export const PLAN = {
  runs: quick ? 1 : 3,
  sequential: quick ? 30 : 200,
  warmup: quick ? 5 : 20,
  concurrent: quick ? 64 : 400,
  concurrency: 16,
};

const tally = new Tally();

/** One system in one run: its floors, then (if it wakes) sequential and concurrent wakes. */
async function measure(system: FloorSystem | WakeSystem): Promise<void> {
  const figures: Figures = {};
  const floors: Array<[string, (() => Promise<void>) | undefined]> = [
    ["noop", system.noop],
    ["object", system.noopObject],
    ["write", system.noopWrite],
  ];
  for (const [name, call] of floors) {
    if (call === undefined) continue;
    const floor = await floorOf(
      call,
      PLAN.sequential,
      PLAN.concurrent,
      PLAN.concurrency,
      system.pids,
    );
    figures[`${name} p50`] = floor.p50;
    figures[`${name} p99`] = floor.p99;
    figures[`${name} rate`] = floor.rate;
    figures[`${name} cpu per 1000`] = floor.cpuPer1000;
  }
  if ("prepare" in system) {
    Object.assign(figures, await sequentialWakes(system, PLAN.sequential, PLAN.warmup));
    Object.assign(figures, await concurrentWakes(system, PLAN.concurrent, PLAN.concurrency));
  }
  tally.add(system.name, figures);
  const brief = ["wake p50", "accept p50", "accept rate", "cpu per 1000", "write p50", "object p50"]
    .filter((metric) => figures[metric] !== undefined)
    .map((metric) => `${metric} ${figures[metric]?.toFixed(2)}`)
    .join(", ");
  console.log(`  ${system.name}: ${brief}`);
}

async function oneRun(run: number, scripts: { execInbox: string; workflows: string }) {
  say(`- run ${run}/${PLAN.runs}: load average at start ${loadAverage()}`);
  const host = await startArrivalsHost();
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-bench-"));
  try {
    const floor = await serveFloorWorker(join(state, "floor"));
    await measure(floorSystem(SYSTEM.floorDirect, floor.directBase, () => floor.pids));
    await measure(floorSystem(SYSTEM.floorEntry, floor.base, () => floor.pids));
    const wakeFloor = durableWakeFloor(SYSTEM.wakeFloor, floor.directBase, host, () => floor.pids);
    await measure(wakeFloor);
    tally.add(SYSTEM.wakeFloor, await floorWakeRows(wakeFloor, floor.directBase, 10));
    await floor.stop();

    // A fresh process and state for each phase: local workerd keeps an object open while it is
    // used and for some seconds after, and past about 800 session objects open at once in one
    // process SQLite runs out of heap (SQLITE_NOMEM) and new sessions answer 500
    // (`npm run bench -- objects`). One phase opens about 660 within seconds.
    const served = await serveExecInbox(scripts.execInbox, join(state, "mf"));
    const direct = execInboxSystem(SYSTEM.execDirect, served.directBase, host, () => served.pids);
    await measure(direct);
    // Rows of one completion that wakes a session, and of its whole cycle (the agent claims 300 ms
    // after the webhook, then suspends again).
    tally.add(
      SYSTEM.execDirect,
      await cycleRows(direct, agentClient(served.directBase), {
        sessions: 10,
        claimMs: 300,
        label: "rows",
      }),
    );
    await served.stop();
    // A background command by each door, REST and MCP, on a workerd process of its own.
    await measureCommandPaths(scripts.execInbox, join(state, "mf-commands"), PLAN, tally);

    const entry = await serveExecInbox(scripts.execInbox, join(state, "mf-entry"));
    await measure(execInboxSystem(SYSTEM.execEntry, entry.base, host, () => entry.pids));
    await entry.stop();

    const noIndex = await serveExecInbox(scripts.execInbox, join(state, "mf-off"), {
      INDEX_UPDATES: "off",
    });
    await measure(
      execInboxSystem(SYSTEM.execNoIndex, noIndex.directBase, host, () => noIndex.pids),
    );
    await noIndex.stop();

    const dev = await startWranglerDev(join(state, "dev"), "any", UNLIMITED_VARS);
    await measure(
      execInboxSystem(SYSTEM.execDev, dev.base, host, () => processTree(dev.pid() ?? -1)),
    );
    await dev.stop();

    for (const http2 of [false, true]) {
      const name = http2 ? SYSTEM.restate2 : SYSTEM.restate1;
      const peer = await startRestatePeer({ http2 });
      await measure(restateSystem(name, peer, http2));
      tally.add(name, { "handler errors": peer.handlerErrors() });
      await peer.stop();
    }

    const flows = await startWorkflowsPeer(scripts.workflows, join(state, "wf"));
    await measure(workflowsSystem(SYSTEM.flowsDirect, flows, flows.served.directBase, host));
    await flows.stop();
    const flowsEntry = await startWorkflowsPeer(scripts.workflows, join(state, "wf-entry"));
    await measure(workflowsSystem(SYSTEM.flowsEntry, flowsEntry, flowsEntry.served.base, host));
    await flowsEntry.stop();
  } finally {
    await host.close();
    rmSync(state, { recursive: true, force: true });
  }
  say(`- run ${run}/${PLAN.runs}: load average at end ${loadAverage()}`);
}

async function main(): Promise<void> {
  const started = Date.now();
  const version = (path: string) => JSON.parse(readFileSync(path, "utf8")).version as string;
  const stamp = [
    `Written by \`npm run bench${quick ? " -- --quick" : ""}\` on ${new Date(started).toISOString()}.`,
    `Machine: ${hostname()}, ${cpus().length} cores (${cpus()[0]?.model}), ${Math.round(totalmem() / 2 ** 30)} GiB; node ${process.version}, workerd ${version("node_modules/workerd/package.json")}, miniflare ${version("node_modules/miniflare/package.json")}, restate-server ${version("node_modules/@restatedev/restate-server/package.json")}, @restatedev/restate-sdk ${version("node_modules/@restatedev/restate-sdk/package.json")}.`,
    `Load average at start: ${loadAverage()} (1, 5, 15 min; runnable/total; last pid).`,
    ...(quick ? ["", "**Quick mode: one run, fewer samples: indicative only.**"] : []),
  ];
  for (const line of stamp) say(line);
  say();
  const scripts = {
    execInbox: buildWorker(".", ".bench/exec-inbox"),
    workflows: buildWorkflowsPeer(),
  };
  for (let run = 1; run <= PLAN.runs; run += 1) await oneRun(run, scripts);
  const results = mark();
  printBudget(tally);
  printTables(tally, PLAN);
  printCommands(tally, PLAN);
  // The doc's results are written as soon as they exist: the sections after them are the report's.
  writeResults("docs/benchmarks.md", [...stamp, ...saidSince(results)].join("\n"));
  await benchSemantics(scripts);
  await benchSandbox(quick ? 50 : undefined);
  await benchHeartbeats(scripts.execInbox, quick);
  if (!quick) await benchSyscalls(scripts.execInbox);
  if (!quick) {
    say("### The session index off and on (`npm run bench -- index`, wrangler dev)");
    await benchIndex(false, say);
  }
  say();
  say(
    `Finished in ${Math.round((Date.now() - started) / 1000)} s; load average at end: ${loadAverage()}.`,
  );
  writeReport(
    quick ? ".bench/benchmarks-quick.md" : ".bench/benchmarks-latest.md",
    quick ? "Benchmark figures (quick run)" : "Benchmark figures of the last full run",
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
