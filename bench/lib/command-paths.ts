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
type Step = (typeof STEPS)[number];

/** One value per step of a path, and for the whole command where it has one. */
type PerStep<T> = Record<Step, T>;

const perStep = <T>(make: () => T): PerStep<T> => ({
  start: make(),
  complete: make(),
  result: make(),
});

/** Runs `step` of `path` for the command `i`, which goes to the path's sessions in turn. */
async function runStep(
  path: CommandPath,
  sids: readonly string[],
  step: Step,
  i: number,
  cmd: string,
  started: Started[],
): Promise<void> {
  if (step === "start") started[i] = await path.start(sids[i % sids.length] ?? "", cmd);
  else if (step === "complete") await path.complete(started[i] as Started);
  else await path.result(started[i] as Started);
}

/**
 * Commands one at a time, the two paths taking turns so that the machine's load falls on both
 * alike: p50 of each step and of the whole (start → result), p99 of the whole. The first `warmup`
 * turns are not counted.
 */
export async function sequentialCommands(
  paths: readonly CommandPath[],
  sessions: ReadonlyMap<CommandPath, readonly string[]>,
  samples: number,
  warmup: number,
): Promise<Map<CommandPath, Figures>> {
  const steps = new Map(paths.map((path) => [path, perStep((): number[] => [])]));
  const wholes = new Map(paths.map((path) => [path, [] as number[]]));
  for (let i = 0; i < samples + warmup; i += 1) {
    for (const path of paths) {
      const started: Started[] = [];
      const took = perStep(() => 0);
      for (const step of STEPS) {
        const t0 = performance.now();
        await runStep(path, sessions.get(path) ?? [], step, i, `bench seq ${i}`, started);
        took[step] = performance.now() - t0;
      }
      if (i < warmup) continue;
      for (const step of STEPS) steps.get(path)?.[step].push(took[step]);
      wholes.get(path)?.push(STEPS.reduce((sum, step) => sum + took[step], 0));
    }
  }
  return new Map(
    paths.map((path) => {
      const own = steps.get(path) ?? perStep((): number[] => []);
      const whole = wholes.get(path) ?? [];
      return [
        path,
        {
          "start p50": percentile(own.start, 50),
          "complete p50": percentile(own.complete, 50),
          "result p50": percentile(own.result, 50),
          "cycle p50": percentile(whole, 50),
          "cycle p99": percentile(whole, 99),
        },
      ];
    }),
  );
}

/**
 * `count` commands with `concurrency` in flight, step by step: every start, then every completion,
 * then every result, each batch's serving CPU read from a quiet start until the processes settle
 * again. The paths take turns at each step. CPU ms per command for each step and the whole, and
 * commands per second over the three batches (the settling not counted).
 */
export async function batchedCommands(
  paths: readonly CommandPath[],
  sessions: ReadonlyMap<CommandPath, readonly string[]>,
  count: number,
  concurrency: number,
  pids: () => readonly number[],
): Promise<Map<CommandPath, Figures>> {
  const started = new Map(paths.map((path) => [path, [] as Started[]]));
  const cpuMs = new Map(paths.map((path) => [path, perStep(() => Number.NaN)]));
  const batchMs = new Map(paths.map((path) => [path, 0]));
  const indexes = Array.from({ length: count }, (_, i) => i);
  for (const step of STEPS) {
    for (const path of paths) {
      const sids = sessions.get(path) ?? [];
      const mine = started.get(path) ?? [];
      await settle(pids);
      const cpuBefore = cpuSeconds(pids());
      const t0 = performance.now();
      await pool(indexes, concurrency, (i) =>
        runStep(path, sids, step, i, `bench batch ${i}`, mine),
      );
      batchMs.set(path, (batchMs.get(path) ?? 0) + (performance.now() - t0));
      await settle(pids);
      const own = cpuMs.get(path);
      // CPU seconds per command, in ms.
      if (own !== undefined) own[step] = ((cpuSeconds(pids()) - cpuBefore) / count) * 1000;
    }
  }
  return new Map(
    paths.map((path) => {
      const own = cpuMs.get(path) ?? perStep(() => Number.NaN);
      return [
        path,
        {
          "start cpu ms": own.start,
          "complete cpu ms": own.complete,
          "result cpu ms": own.result,
          "cycle cpu ms": own.start + own.complete + own.result,
          "cycle rate": count / ((batchMs.get(path) ?? Number.NaN) / 1000),
        },
      ];
    }),
  );
}
