// `npm run bench -- commands [--quick]`, also a phase of every run of `npm run bench`: a background
// command from its start to its result by the REST API and by the session's MCP endpoint, on one
// exec-inbox served by workerd (direct socket) with a stand-in runner in this process
// (bench/lib/command-paths.ts, bench/lib/stand-in-runner.ts). The MCP calls are plain fetch
// JSON-RPC, not the SDK's Client: each step is then exactly the request a client sends for it, by
// the same HTTP client as the REST path's (docs/benchmarks.md, "Method").
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { scriptArgs } from "../scripts/lib/args";
import { COMMAND_PATH, printCommands } from "./command-table";
import { batchedCommands, mcpPath, restPath, sequentialCommands } from "./lib/command-paths";
import { buildWorker, serveExecInbox } from "./lib/miniflare-stack";
import { settle } from "./lib/proc";
import { Tally } from "./lib/report";
import { startStandInRunner } from "./lib/stand-in-runner";

/** Sessions per path: commands go to them in turn, so 16 in flight are mostly in 16 objects. */
const SESSIONS = 16;

/** One measurement of both paths into `tally`, on a workerd process of its own under `stateDir`. */
export async function measureCommandPaths(
  scriptPath: string,
  stateDir: string,
  plan: { sequential: number; warmup: number; concurrent: number; concurrency: number },
  tally: Tally,
): Promise<void> {
  const runner = await startStandInRunner();
  const served = await serveExecInbox(scriptPath, stateDir);
  try {
    const paths = [
      restPath(COMMAND_PATH.rest, served.directBase),
      mcpPath(COMMAND_PATH.mcp, served.directBase, runner),
    ];
    const sessions = new Map(
      await Promise.all(
        paths.map(async (path) => [path, await path.prepare("cmd", SESSIONS)] as const),
      ),
    );
    const pids = () => served.pids;
    await settle(pids);
    const sequential = await sequentialCommands(paths, sessions, plan.sequential, plan.warmup);
    const batched = await batchedCommands(paths, sessions, plan.concurrent, plan.concurrency, pids);
    for (const path of paths) {
      const figures = { ...sequential.get(path), ...batched.get(path) };
      tally.add(path.name, figures);
      const brief = ["cycle p50", "start cpu ms", "result cpu ms", "cycle cpu ms"]
        .map((metric) => `${metric} ${figures[metric]?.toFixed(2)}`)
        .join(", ");
      console.log(`  ${path.name}: ${brief}`);
    }
  } finally {
    await served.stop();
    await runner.close();
  }
}

async function main(): Promise<void> {
  const quick = scriptArgs([]).quick;
  const plan = {
    sequential: quick ? 30 : 200,
    warmup: quick ? 5 : 20,
    concurrent: quick ? 64 : 400,
    concurrency: 16,
  };
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-bench-commands-"));
  const tally = new Tally();
  try {
    await measureCommandPaths(buildWorker(".", ".bench/exec-inbox"), state, plan, tally);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
  printCommands(tally, plan);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
