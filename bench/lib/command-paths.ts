// A background command from its start to its result, by the two doors a session has: the REST API
// (reserve the job → the runner's completion → pull the job) and the session's MCP endpoint
// (a task-augmented `exec_command`, which calls the runner and reserves and arms the job → the
// runner's completion → `tasks/result`). Both run against the same workerd process, their runner
// a stand-in in this process (bench/lib/stand-in-runner.ts), so the serving CPU is the service's.
import { type Callback, postCompletion } from "@exec-inbox/client";
import { AGENT_TOKEN, agentClient } from "../../test/support/local-stack";
import { rpcBody, rpcResult, succeeded, workingTaskId } from "./json-rpc";
import type { Figures } from "./measure";
import { cpuSeconds, settle } from "./proc";
import type { StandInRunner } from "./stand-in-runner";
import { percentile } from "./stats";
import { pool } from "./wake-systems";

/** What `complete` and `result` need of a started command. */
interface Started {
  readonly sid: string;
  readonly cmd: string;
  /** REST: the reservation's callback and handle. MCP: the task's id. */
  readonly callback?: Callback;
  readonly handle?: string;
  readonly taskId?: string;
}

export interface CommandPath {
  readonly name: string;
  /** Makes `count` sessions ready to run commands (not measured). */
  prepare(label: string, count: number): Promise<string[]>;
  /** Starts the background command `cmd` in `sid`; settles once its job is reserved and known. */
  start(sid: string, cmd: string): Promise<Started>;
  /** The runner reports the command's end; settles on the service's 202. */
  complete(started: Started): Promise<void>;
  /** The agent reads the result; settles once it has it. */
  result(started: Started): Promise<void>;
}

const COMPLETION = { status: "completed", exit_code: 0, output: "ok\n" } as const;

/** The REST path: what an agent host that runs its own runner does (docs/api.md, "Exec jobs"). */
export function restPath(name: string, base: string): CommandPath {
  const inbox = agentClient(base);
  const run = Date.now().toString(36);
  let handles = 0;
  return {
    name,
    async prepare(label, count) {
      const sids = Array.from({ length: count }, (_, i) => `cr-${run}-${label}-${i}`);
      await pool(sids, 8, async (id) => {
        await inbox.createSession({ id });
      });
      return sids;
    },
    async start(sid, cmd) {
      handles += 1;
      const handle = `h${handles}`;
      const reserved = await inbox.reserveJob(sid, { handle, command: cmd });
      return { sid, cmd, handle, callback: reserved.callback };
    },
    async complete(started) {
      if (started.callback === undefined) throw new Error("no callback");
      await postCompletion(started.callback, COMPLETION);
    },
    async result(started) {
      const job = await inbox.getJob(started.sid, started.handle ?? "");
      if (job.status !== "completed" || job.exit_code !== 0) {
        throw new Error(`job ${started.handle}: ${job.status} ${job.exit_code}`);
      }
    },
  };
}

/**
 * The MCP path, as a client sends it: one JSON-RPC message per POST with the Streamable HTTP
 * transport's headers, plain fetch (the same client as the REST path's), `initialize` once per
 * session when it is prepared, as a client does once per connection.
 */
export function mcpPath(name: string, base: string, runner: StandInRunner): CommandPath {
  const inbox = agentClient(base);
  const run = Date.now().toString(36);
  let ids = 0;
  const rpc = async (sid: string, method: string, params: Record<string, unknown>) => {
    ids += 1;
    const id = ids;
    const response = await fetch(`${base}/v1/sessions/${sid}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${AGENT_TOKEN}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      },
      body: rpcBody(id, method, params),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method}: ${response.status} ${text}`);
    return rpcResult(JSON.parse(text), id);
  };
  return {
    name,
    async prepare(label, count) {
      const sids = Array.from({ length: count }, (_, i) => `cm-${run}-${label}-${i}`);
      await pool(sids, 8, async (id) => {
        await inbox.createSession({ id, runner: { url: runner.url, token: runner.token } });
        await rpc(id, "initialize", {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "exec-inbox-bench", version: "1" },
        });
      });
      return sids;
    },
    async start(sid, cmd) {
      const created = await rpc(sid, "tools/call", {
        name: "exec_command",
        arguments: { cmd },
        task: { ttl: 60_000 },
      });
      return { sid, cmd, taskId: workingTaskId(created) };
    },
    complete: (started) => runner.complete(started.cmd, COMPLETION),
    async result(started) {
      succeeded(await rpc(started.sid, "tasks/result", { taskId: started.taskId }));
    },
  };
}

const STEPS = ["start", "complete", "result"] as const;

/**
 * Commands one at a time, the two paths taking turns so that the machine's load falls on both
 * alike: p50 of each step and of the whole (start → result), p99 of the whole. The first `warmup`
 * turns are not counted. Commands go to the sessions in turn.
 */
export async function sequentialCommands(
  paths: readonly CommandPath[],
  sessions: ReadonlyMap<CommandPath, readonly string[]>,
  samples: number,
  warmup: number,
): Promise<Map<CommandPath, Figures>> {
  const times = new Map(
    paths.map((path) => [
      path,
      { start: [], complete: [], result: [], cycle: [] } as Record<string, number[]>,
    ]),
  );
  for (let i = 0; i < samples + warmup; i += 1) {
    for (const path of paths) {
      const sids = sessions.get(path) ?? [];
      const cmd = `bench seq ${i}`;
      const t0 = performance.now();
      const started = await path.start(sids[i % sids.length] ?? "", cmd);
      const t1 = performance.now();
      await path.complete(started);
      const t2 = performance.now();
      await path.result(started);
      const t3 = performance.now();
      if (i < warmup) continue;
      const own = times.get(path);
      own?.start?.push(t1 - t0);
      own?.complete?.push(t2 - t1);
      own?.result?.push(t3 - t2);
      own?.cycle?.push(t3 - t0);
    }
  }
  return new Map(
    paths.map((path) => {
      const own = times.get(path) ?? {};
      const p = (step: string, at: number) => percentile(own[step] ?? [], at);
      return [
        path,
        {
          "start p50": p("start", 50),
          "complete p50": p("complete", 50),
          "result p50": p("result", 50),
          "cycle p50": p("cycle", 50),
          "cycle p99": p("cycle", 99),
        },
      ];
    }),
  );
}

/**
 * `count` commands with `concurrency` in flight, step by step: every start, then every completion,
 * then every result, each batch's serving CPU read until the processes settle. The paths take
 * turns at each step. CPU ms per command for each step and the whole, and commands per second over
 * the three batches (the settling not counted).
 */
export async function batchedCommands(
  paths: readonly CommandPath[],
  sessions: ReadonlyMap<CommandPath, readonly string[]>,
  count: number,
  concurrency: number,
  pids: () => readonly number[],
): Promise<Map<CommandPath, Figures>> {
  const started = new Map(paths.map((path) => [path, [] as Started[]]));
  const figures = new Map(paths.map((path) => [path, { "batch ms": 0 } as Figures]));
  const indexes = Array.from({ length: count }, (_, i) => i);
  for (const step of STEPS) {
    for (const path of paths) {
      const sids = sessions.get(path) ?? [];
      const mine = started.get(path) ?? [];
      const own = figures.get(path) ?? {};
      await settle(pids);
      const cpuBefore = cpuSeconds(pids());
      const t0 = performance.now();
      await pool(indexes, concurrency, async (i) => {
        if (step === "start")
          mine[i] = await path.start(sids[i % sids.length] ?? "", `bench batch ${i}`);
        else if (step === "complete") await path.complete(mine[i] as Started);
        else await path.result(mine[i] as Started);
      });
      own["batch ms"] = (own["batch ms"] ?? 0) + (performance.now() - t0);
      await settle(pids);
      // CPU s per command is ks per 1,000: × 1000 for ms per command.
      own[`${step} cpu ms`] = ((cpuSeconds(pids()) - cpuBefore) / count) * 1000;
    }
  }
  return new Map(
    paths.map((path) => {
      const own = figures.get(path) ?? {};
      const cpu = STEPS.reduce((sum, step) => sum + (own[`${step} cpu ms`] ?? 0), 0);
      return [
        path,
        {
          "start cpu ms": own["start cpu ms"] ?? Number.NaN,
          "complete cpu ms": own["complete cpu ms"] ?? Number.NaN,
          "result cpu ms": own["result cpu ms"] ?? Number.NaN,
          "cycle cpu ms": cpu,
          "cycle rate": count / ((own["batch ms"] ?? Number.NaN) / 1000),
        },
      ];
    }),
  );
}
