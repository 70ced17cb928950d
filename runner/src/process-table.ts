// Owns the runner's child processes: spawn in a shell, collect output, wait with a yield window,
// write stdin, and keep an exited process readable. Reporting exits to exec-inbox is left to the runner.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { OutputBuffer } from "./output-buffer";

export const MAX_LIVE_PROCESSES = 64;
export const DEFAULT_YIELD_MS = 10_000;
export const MIN_YIELD_MS = 250;
export const MAX_YIELD_MS = 30_000;
/** The final result keeps head + tail within exec-inbox's 256 KiB output limit. */
const FULL_HEAD_BYTES = 96 * 1024;
const FULL_TAIL_BYTES = 96 * 1024;
const BYTES_PER_TOKEN = 4;
const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;

export const clampYield = (ms: number | undefined): number =>
  Math.min(MAX_YIELD_MS, Math.max(MIN_YIELD_MS, ms ?? DEFAULT_YIELD_MS));

const outputLimit = (maxOutputTokens: number | undefined): number =>
  Math.max(256, (maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS) * BYTES_PER_TOKEN);

export type Exit =
  | { readonly kind: "exited"; readonly exitCode: number }
  | { readonly kind: "signaled"; readonly signal: string }
  | { readonly kind: "spawn_failed"; readonly message: string };

export interface ToolAnswer {
  readonly session_id?: string;
  readonly exit_code?: number | null;
  readonly output: string;
  readonly wall_time_ms: number;
  readonly output_bytes_total: number;
  readonly output_bytes_dropped: number;
}

export interface ManagedProcess {
  readonly sessionId: string;
  readonly command: string;
  readonly startedAt: number;
  readonly full: OutputBuffer;
  exit: Exit | null;
  /** True once a tool answer has shown the model this process's exit. */
  exitReported: boolean;
  killRequested: boolean;
  finalAnswer: ToolAnswer | null;
  readonly child: ChildProcessWithoutNullStreams | null;
  readonly exited: Promise<Exit>;
  unread: OutputBuffer;
}

export class TooManyProcesses extends Error {}
export class UnknownProcess extends Error {}

const exitCodeOf = (exit: Exit): number | null => (exit.kind === "exited" ? exit.exitCode : null);

export class ProcessTable {
  private readonly processes = new Map<string, ManagedProcess>();
  private readonly exitListeners: Array<(process: ManagedProcess) => void> = [];

  /** Ids continue after `lastId` so a restarted runner never reuses a handle it journaled. */
  constructor(private nextId = 1000) {
    this.nextId = Math.max(1000, nextId);
  }

  onExit(listener: (process: ManagedProcess) => void): void {
    this.exitListeners.push(listener);
  }

  get liveCount(): number {
    return [...this.processes.values()].filter((process) => process.exit === null).length;
  }

  get(sessionId: string): ManagedProcess {
    const process = this.processes.get(sessionId);
    if (process === undefined) throw new UnknownProcess(`no process with session_id ${sessionId}`);
    return process;
  }

  has(sessionId: string): boolean {
    return this.processes.has(sessionId);
  }

  start(command: string, workdir: string | undefined): ManagedProcess {
    if (this.liveCount >= MAX_LIVE_PROCESSES) {
      throw new TooManyProcesses(`at most ${MAX_LIVE_PROCESSES} processes may run at once`);
    }
    this.nextId += 1;
    const sessionId = String(this.nextId);
    const child = spawn("/bin/bash", ["-c", command], {
      cwd: workdir,
      env: { ...process.env, NO_COLOR: "1", TERM: "dumb" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const managed: ManagedProcess = {
      sessionId,
      command,
      startedAt: Date.now(),
      full: new OutputBuffer(FULL_HEAD_BYTES, FULL_TAIL_BYTES),
      unread: new OutputBuffer(FULL_HEAD_BYTES, FULL_TAIL_BYTES),
      exit: null,
      exitReported: false,
      killRequested: false,
      finalAnswer: null,
      child,
      exited: new Promise<Exit>((resolve) => {
        const collect = (chunk: Buffer) => {
          managed.full.append(chunk);
          managed.unread.append(chunk);
        };
        child.stdout.on("data", collect);
        child.stderr.on("data", collect);
        child.stdin.on("error", () => {
          // A process that closed its stdin just stops reading; writes are best effort.
        });
        child.once("error", (error) => resolve({ kind: "spawn_failed", message: error.message }));
        // `close` (not `exit`) waits for stdout/stderr to drain, so no output is lost.
        child.once("close", (code, signal) =>
          resolve(
            signal === null
              ? { kind: "exited", exitCode: code ?? 0 }
              : { kind: "signaled", signal },
          ),
        );
      }).then((exit) => {
        managed.exit = exit;
        for (const listener of this.exitListeners) listener(managed);
        return exit;
      }),
    };
    this.processes.set(sessionId, managed);
    return managed;
  }

  private async waitUpTo(process: ManagedProcess, ms: number): Promise<void> {
    if (process.exit !== null) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      process.exited,
      new Promise((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
  }

  /** Reads what is new since the last read; once the exit is shown, the same final answer again. */
  private answer(
    process: ManagedProcess,
    startedAt: number,
    maxOutputTokens: number | undefined,
  ): ToolAnswer {
    if (process.finalAnswer !== null) return process.finalAnswer;
    const rendered = process.unread.render(outputLimit(maxOutputTokens));
    process.unread = new OutputBuffer(FULL_HEAD_BYTES, FULL_TAIL_BYTES);
    const base = {
      output: rendered.text,
      wall_time_ms: Date.now() - startedAt,
      output_bytes_total: process.full.totalBytes,
      output_bytes_dropped: rendered.droppedBytes,
    };
    if (process.exit === null) return { session_id: process.sessionId, ...base };
    process.exitReported = true;
    process.finalAnswer = {
      session_id: process.sessionId,
      exit_code: exitCodeOf(process.exit),
      ...base,
    };
    return process.finalAnswer;
  }

  async execCommand(input: {
    cmd: string;
    workdir?: string;
    yield_time_ms?: number;
    max_output_tokens?: number;
  }): Promise<ToolAnswer> {
    const startedAt = Date.now();
    const process = this.start(input.cmd, input.workdir);
    await this.waitUpTo(process, clampYield(input.yield_time_ms));
    const answer = this.answer(process, startedAt, input.max_output_tokens);
    if (process.exit === null) return answer;
    // Exited within the yield: the model gets the result itself, no handle.
    const { session_id: _handle, ...finished } = answer;
    return finished;
  }

  async writeStdin(input: {
    session_id: string;
    chars?: string;
    yield_time_ms?: number;
    max_output_tokens?: number;
  }): Promise<ToolAnswer> {
    const startedAt = Date.now();
    const process = this.get(input.session_id);
    if (input.chars && process.exit === null && process.child !== null)
      process.child.stdin.write(input.chars);
    await this.waitUpTo(process, clampYield(input.yield_time_ms));
    return this.answer(process, startedAt, input.max_output_tokens);
  }

  kill(sessionId: string): void {
    const process = this.get(sessionId);
    if (process.exit !== null || process.child === null) return;
    process.killRequested = true;
    process.child.kill("SIGKILL");
  }

  /** Kills every live process (runner shutdown); their exits are reported by the listeners. */
  async shutdown(): Promise<void> {
    const live = [...this.processes.values()].filter((process) => process.exit === null);
    for (const process of live) process.child?.kill("SIGKILL");
    await Promise.all(live.map((process) => process.exited));
  }
}
