// The runner as a real process (`node --import tsx runner/main.ts`, no wrapper, so a signal reaches
// it), and what tests ask of the operating system: which processes of a group are still alive.
import { type ChildProcess, execFileSync } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort, spawnCollecting, waitForHealthy } from "../support/local-stack";
import { RUNNER_TOKEN } from "../support/secrets";

export { RUNNER_TOKEN };

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;

export interface RunnerProcessOptions {
  /** Added to (or, when undefined, removed from) the runner's environment. */
  readonly env?: Record<string, string | undefined>;
  readonly cwd?: string;
}

export interface RunnerProcess {
  readonly base: string;
  readonly pid: number;
  readonly log: () => string;
  /** SIGKILL to the runner and to every group it started: a crash, with nothing left behind. */
  kill(): Promise<void>;
  /**
   * Sends `signal` to the runner alone and waits (at most `timeoutMs`) for it to exit: its exit code,
   * or the signal it ended by (a stopped runner ends by the signal that stopped it).
   */
  stop(
    signal?: NodeJS.Signals,
    timeoutMs?: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

/** Spawns the runner in its own group; `stateDir: null` leaves RUNNER_STATE_DIR unset. */
export function spawnRunner(
  stateDir: string | null,
  port: number,
  options: RunnerProcessOptions = {},
): { child: ChildProcess; output: () => string } {
  return spawnCollecting(
    process.execPath,
    ["--import", TSX, join(ROOT, "runner/main.ts")],
    {
      RUNNER_PORT: String(port),
      RUNNER_TOKENS: RUNNER_TOKEN,
      RUNNER_STATE_DIR: stateDir ?? undefined,
      ...options.env,
    },
    options.cwd ?? ROOT,
  );
}

const started = new Set<RunnerProcess>();

/** For afterAll: a test that failed half-way still leaves no runner and no command running. */
export async function killAllRunners(): Promise<void> {
  await Promise.all([...started].map((runner) => runner.kill()));
}

export async function startRunnerProcess(
  stateDir: string | null,
  options: RunnerProcessOptions = {},
): Promise<RunnerProcess> {
  const { child, output, base } = await spawnOnFreePort(stateDir, options);
  const pid = child.pid!;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const runner: RunnerProcess = {
    base,
    pid,
    log: output,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const groups = childPids(pid);
      process.kill(-pid, "SIGKILL");
      for (const group of groups) signalQuietly(-group, "SIGKILL");
      await exited;
    },
    async stop(signal = "SIGTERM", timeoutMs = 20_000) {
      const sent = Date.now();
      process.kill(pid, signal);
      const exit = await Promise.race([exited, sleep(timeoutMs).then(() => "timeout" as const)]);
      if (exit === "timeout")
        throw new Error(`runner still running ${timeoutMs} ms after ${signal}`);
      return { ...exit, ms: Date.now() - sent };
    },
  };
  started.add(runner);
  return runner;
}

/**
 * A free port is free only when asked: another test's process may take it before the runner
 * listens (seen on a busy machine). Such a start is tried again on another port.
 */
async function spawnOnFreePort(stateDir: string | null, options: RunnerProcessOptions) {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const { child, output } = spawnRunner(stateDir, port, options);
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitForHealthy(base, child, output, 20_000);
      return { child, output, base };
    } catch (error) {
      if (attempt >= 3 || !output().includes("EADDRINUSE")) throw error;
    }
  }
}

/** Runs the runner expecting it to refuse to start: its exit code and what it printed. */
export async function runnerRefusal(env: Record<string, string | undefined>) {
  const { child, output } = spawnRunner(null, await freePort(), { env });
  const code = await Promise.race([
    new Promise<number | null>((resolve) => child.once("exit", resolve)),
    sleep(20_000).then(() => "still running" as const),
  ]);
  if (code === "still running") process.kill(-child.pid!, "SIGKILL");
  return { code, output: output() };
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * The runner's newest child: the leader of the command it started last (its shell, or with the
 * sandbox bwrap), whose pid is the command's session and group id seen from outside.
 */
export function newestCommandLeader(runnerPid: number): number {
  const newest = execFileSync(
    "ps",
    ["-o", "pid=", "--ppid", String(runnerPid), "--sort=start_time"],
    { encoding: "utf8" },
  )
    .trim()
    .split("\n")
    .pop();
  return Number(newest);
}

function childPids(pid: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map(Number)
      .filter((child) => child > 0);
  } catch {
    return []; // ps exits 1 when there is none.
  }
}

/** Live (non-zombie) processes whose process group is `pgid`, from /proc via ps. */
export function groupMembers(pgid: number): number[] {
  return execFileSync("ps", ["-e", "-o", "pid=,pgid=,stat="], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group, stat]) => Number(group) === pgid && !stat?.startsWith("Z"))
    .map(([pid]) => Number(pid));
}

/**
 * Live (non-zombie) processes whose session id is `sid`, read from /proc/<pid>/stat. A command's
 * shell leads a session of its own, so this is everything it started that did not call setsid,
 * whatever process group it moved to.
 */
export function sessionMembers(sid: number): number[] {
  return execFileSync("ps", ["-e", "-o", "pid=,sid=,stat="], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, session, stat]) => Number(session) === sid && !stat?.startsWith("Z"))
    .map(([pid]) => Number(pid));
}

/** For a `finally`: SIGKILL to whatever a failed test left running. */
export function killQuietly(pids: readonly number[]): void {
  for (const pid of pids) signalQuietly(pid, "SIGKILL");
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
