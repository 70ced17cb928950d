// Starts the real `wrangler dev` (local workerd, state on disk) and a real HTTP agent host:
// shared by the e2e tests, the demo and the benchmarks.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { ExecInboxClient } from "@exec-inbox/client";
import { getRequestListener } from "@hono/node-server";
import { createAgentHost, type Delivery } from "./agent-host.mjs";
import { WORKER_BUNDLE_ENV } from "./bundle-worker";
import { sendJson } from "./http-json";

/** The committed local secrets, as `npm start` loads them. */
export function devVar(name: string): string {
  const line = readFileSync(new URL("../../.dev.vars.example", import.meta.url), "utf8")
    .split("\n")
    .find((entry) => entry.startsWith(`${name}=`));
  if (line === undefined) throw new Error(`${name} missing from .dev.vars.example`);
  return line.slice(name.length + 1).trim();
}

/** The agent token of a local `wrangler dev` (the first of AGENT_TOKENS in .dev.vars.example). */
export const AGENT_TOKEN = devVar("AGENT_TOKENS").split(",")[0] ?? "";

export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/**
 * Spawns `command` in its own process group (so a kill takes its children too), collecting its
 * output (`errors`: stderr alone). `env` is added to this process's environment; an undefined value
 * removes the variable.
 */
export function spawnCollecting(
  command: string,
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd?: string,
): { child: ChildProcess; output: () => string; errors: () => string } {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  for (const name of Object.keys(merged)) if (merged[name] === undefined) delete merged[name];
  const child = spawn(command, args, {
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: merged,
  });
  let output = "";
  let errors = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
    errors += chunk;
  });
  return { child, output: () => output, errors: () => errors };
}

/** Polls `${base}/healthz` until it answers 2xx; fails if the child exits first or time runs out. */
export async function waitForHealthy(
  base: string,
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
  healthzStatus = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${child.spawnfile} exited: ${output()}`);
    try {
      // Bounded: whatever holds the port may accept and never answer.
      const answer = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (answer.status === healthzStatus) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${child.spawnfile} did not answer: ${output()}`);
    await sleep(100);
  }
}

/** Whether a process of group `pgid` still runs (a zombie has ended: it holds no port or file). */
function groupRuns(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false; // Nobody left in the group.
  }
  if (!existsSync("/proc")) return true;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The name, in parentheses, may hold spaces and ')': state and pgrp follow its last ')'.
      const [state, , group] = text.slice(text.lastIndexOf(")") + 2).split(" ");
      if (Number(group) === pgid && state !== "Z") return true;
    } catch {
      // Gone meanwhile.
    }
  }
  return false;
}

/**
 * Sends `signal` to the process group `pgid` (SIGKILL to what is left after `graceMs`) and resolves
 * once every process of it has ended: workerd outlives wrangler by a moment, holding the port and
 * the state files until it ends.
 */
export async function endProcessGroup(
  pgid: number,
  signal: NodeJS.Signals,
  graceMs = 5000,
): Promise<void> {
  const send = (which: NodeJS.Signals) => {
    try {
      process.kill(-pgid, which);
    } catch {
      // Gone already.
    }
  };
  const ended = async (timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (groupRuns(pgid)) {
      if (Date.now() > deadline) return false;
      await sleep(25);
    }
    return true;
  };
  send(signal);
  if (await ended(graceMs)) return;
  send("SIGKILL");
  if (!(await ended(graceMs))) throw new Error(`process group ${pgid} outlived SIGKILL`);
}

/** Runs a command to its end (tests of the scripts): its exit code and everything it printed. */
export async function runToEnd(
  command: string,
  args: string[],
): Promise<{ code: number | null; output: string }> {
  const { child, output } = spawnCollecting(command, args);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, output: output() };
}

export interface WranglerDev {
  readonly base: string;
  /** The port it serves on (a restart on the same state can ask for it again). */
  readonly port: number;
  /** The DevTools port of the Worker's isolate (see `isolateHeap`). */
  readonly inspectorPort: number;
  /** Everything wrangler and workerd printed so far. */
  logs(): string;
  /** The process group id of wrangler and its workerd children. */
  pid(): number | undefined;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

const ADDRESS_IN_USE = /Address already in use \(127\.0\.0\.1:\d+\)/;
const START_ATTEMPTS = 4;

/**
 * Starts `wrangler dev` on `port`, or on a free port when it is "any". A free port can be taken by
 * another process before wrangler binds it (tests run side by side), and a restarted process can
 * find its own predecessor still holding the port for a moment: both are tried again, a taken
 * "any" port with a new one.
 */
export async function startWranglerDev(
  stateDir: string,
  port: number | "any",
  vars: Record<string, string> = {},
  /** The /healthz status that means "up": 500 for a Worker started with settings it refuses. */
  healthzStatus = 200,
): Promise<WranglerDev> {
  for (let attempt = 1; ; attempt += 1) {
    const chosen = port === "any" ? await freePort() : port;
    try {
      return await startOnce(stateDir, chosen, vars, healthzStatus);
    } catch (error) {
      const taken = error instanceof Error && ADDRESS_IN_USE.test(error.message);
      if (!taken || attempt >= START_ATTEMPTS) throw error;
      await sleep(1000);
    }
  }
}

async function startOnce(
  stateDir: string,
  port: number,
  vars: Record<string, string>,
  healthzStatus: number,
): Promise<WranglerDev> {
  const inspectorPort = await freePort();
  const built = process.env[WORKER_BUNDLE_ENV];
  const args = [
    "dev",
    // The same wrangler.toml (bindings, vars, assets, migrations); only the Worker comes built.
    ...(built ? ["--no-bundle", built] : []),
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    stateDir,
    "--env-file",
    ".dev.vars.example",
    ...Object.entries(vars).flatMap(([key, value]) => ["--var", `${key}:${value}`]),
  ];
  const { child, output } = spawnCollecting("node_modules/.bin/wrangler", args, {
    WRANGLER_SEND_METRICS: "false",
    NO_COLOR: "1",
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForHealthy(base, child, output, 45_000, healthzStatus);
  return {
    base,
    port,
    inspectorPort,
    logs: output,
    pid: () => child.pid,
    async kill() {
      if (child.exitCode !== null || child.pid === undefined) return;
      await endProcessGroup(child.pid, "SIGKILL");
    },
    async stop() {
      if (child.exitCode !== null || child.pid === undefined) return;
      await endProcessGroup(child.pid, "SIGTERM");
    },
  };
}

/** A webhook the agent host received. */
export type Received = Delivery;

/** Starts `server` on a free loopback port and returns the port. */
export async function listenLocally(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Polls a session's view until `accept` holds; the deadline only bounds a broken run. */
export async function viewWhen(
  base: string,
  sid: string,
  accept: (view: any) => boolean,
  timeoutMs = 30_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await agentClient(base).getSession(sid);
    if (accept(view)) return view;
    if (Date.now() > deadline) throw new Error(`view never matched: ${JSON.stringify(view)}`);
    await sleep(50);
  }
}

/**
 * The agent host fake (agent-host.mjs) served over real HTTP on a loopback port. `url` is its
 * `resume` hook, whose n-th webhook (1-based) gets the status `statusFor` gives (200 by default);
 * `urlFor(key)` is any other hook, answered as `answer` set it.
 */
export async function startAgentHost(statusFor: (n: number) => number = () => 200) {
  const answers = new Map<string, number>();
  const host = createAgentHost({
    statusFor: (key, n) => answers.get(key) ?? (key === "resume" ? statusFor(n) : 200),
  });
  const server = createServer(getRequestListener(host.fetch));
  const base = `http://127.0.0.1:${await listenLocally(server)}`;
  return {
    url: `${base}/hooks/resume`,
    received: host.deliveries("resume"),
    urlFor: (key: string) => `${base}/hooks/${key}`,
    deliveries: host.deliveries,
    /** Every later webhook to `key` gets `status`. */
    answer: (key: string, status: number) => {
      answers.set(key, status);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The typed client of a running exec-inbox at `base`, as the local agent (or `token`). */
export const agentClient = (base: string, token: string = AGENT_TOKEN): ExecInboxClient =>
  new ExecInboxClient({ baseUrl: base, token });

/**
 * A raw request to a running exec-inbox at `base`; the token defaults to the local agent's. Kept for
 * test/e2e/agent-stack.ts's operator event reads until it moves to ExecInboxOperatorClient; every
 * other caller uses `agentClient` or the operator client.
 */
export const api = (
  base: string,
  method: string,
  path: string,
  body?: unknown,
  token: string | null = AGENT_TOKEN,
) => sendJson((request) => fetch(request), `${base}${path}`, method, { body, token });

/** A session whose agent suspended on one background job: the shape operators meet most. */
export async function suspendedSession(
  base: string,
  sid: string,
  resumeUrl: string,
  handle = "build",
): Promise<{ url: string; token: string }> {
  const inbox = agentClient(base);
  await inbox.createSession({ id: sid, resume_url: resumeUrl });
  const job = await inbox.reserveJob(sid, { handle, command: `npm run ${handle}` });
  const run = await inbox.registerRun(sid);
  await inbox.suspend(sid, run.run_id, { waiting_for: [handle] });
  return job.callback;
}

export async function waitFor<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await sleep(50);
  }
}
