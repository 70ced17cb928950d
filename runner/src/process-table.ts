// Owns the runner's child processes: spawn in a shell, collect output, wait with a yield window,
// write stdin, kill, and keep an exited process readable until it is pruned. Reporting exits to
// exec-inbox, and deciding when a process may be pruned, is left to the runner.
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import type { FullOutputBody } from "../../shared/full-output";
import { outputBudget } from "../../shared/output-budget";
import { removeWhenEmpty } from "./cgroup";
import { childEnvironment } from "./child-env";
import { type Ending, endingOf } from "./ending";
import { type Exit, exitOf } from "./exit-status";
import { embeddedPlan, type LaunchPlan, launch } from "./launch";
import { DiskMeter, type LimitHit, limitPassed, watchLimits } from "./limit-watch";
import { OutputBuffer } from "./output-buffer";
import { OutputSpool, removeSpool, spoolPath } from "./output-spool";
import { endSession } from "./process-group";

export const MAX_LIVE_PROCESSES = 64;
const DEFAULT_YIELD_MS = 10_000;
const MIN_YIELD_MS = 250;
const MAX_YIELD_MS = 30_000;
/** The final result keeps head + tail within exec-inbox's 256 KiB output limit. */
const FULL_HEAD_BYTES = 96 * 1024;
const FULL_TAIL_BYTES = 96 * 1024;

export const clampYield = (ms: number | undefined): number =>
  Math.min(MAX_YIELD_MS, Math.max(MIN_YIELD_MS, ms ?? DEFAULT_YIELD_MS));

export type { Exit } from "./exit-status";

interface ToolAnswer {
  readonly session_id?: string;
  readonly exit_code?: number | null;
  readonly output: string;
  readonly wall_time_ms: number;
  readonly output_bytes_total: number;
  readonly output_bytes_dropped: number;
  /** Once exited: completed, failed or killed, as the completion says it. */
  readonly status?: Ending["status"];
  /** Once exited: who ended it (a limit, a kill request, the process itself), as the completion. */
  readonly ended_by?: Ending["endedBy"];
  /** Once exited by a signal: its name. */
  readonly signal?: string;
}

export interface ManagedProcess {
  readonly sessionId: string;
  readonly command: string;
  readonly startedAt: number;
  readonly full: OutputBuffer;
  exit: Exit | null;
  endedAt: number | null;
  /** True once a tool answer has shown the model this process's exit. */
  exitReported: boolean;
  killRequested: boolean;
  finalAnswer: ToolAnswer | null;
  readonly child: ChildProcessWithoutNullStreams | null;
  readonly exited: Promise<Exit>;
  unread: OutputBuffer;
  /** The signals the runner sent the command (ending it on a request, a limit or a shutdown). */
  readonly signalsSent: Set<string>;
  /** The first limit the command passed; the runner ended it for that. */
  limitHit: LimitHit | null;
  /** The whole output on disk while the command runs (null when the table spools none). */
  readonly spool: OutputSpool | null;
  /** Once it exited: the whole output the spool holds, by parts; null when there is none. */
  fullOutput: FullOutputBody | null;
}

export class TooManyProcesses extends Error {}
export class UnknownProcess extends Error {}
export class ShuttingDown extends Error {}

interface ProcessTableOptions {
  /** Hands out process ids; the runner's journals them so none is ever reused. */
  readonly nextId?: () => string;
  /** The commands' whole environment (default: the allow-list of child-env.ts). */
  readonly env?: Record<string, string>;
  readonly killGraceMs?: number;
  /** Sandbox, limits and cgroups (default: bwrap where it works, default limits, no cgroups). */
  readonly launch?: Omit<LaunchPlan, "env">;
  /** Spool each command's whole output to `dir` (at most `maxBytes`, in parts of `partBytes`). */
  readonly spool?: { readonly dir: string; readonly maxBytes: number; readonly partBytes: number };
}

export class ProcessTable {
  private readonly processes = new Map<string, ManagedProcess>();
  private readonly exitListeners: Array<(process: ManagedProcess) => void> = [];
  private readonly nextId: () => string;
  private readonly env: Record<string, string>;
  private readonly killGraceMs: number;
  private readonly plan: LaunchPlan;
  private readonly spool: ProcessTableOptions["spool"];
  private closed = false;

  constructor(options: ProcessTableOptions = {}) {
    let counter = 1000;
    this.nextId = options.nextId ?? (() => String(++counter));
    this.env = options.env ?? childEnvironment(process.env);
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.plan = { ...(options.launch ?? embeddedPlan()), env: this.env };
    this.spool = options.spool;
  }

  get sandboxed(): boolean {
    return this.plan.sandbox.mode === "bwrap";
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

  /** Every process still held, running or exited. */
  all(): ManagedProcess[] {
    return [...this.processes.values()];
  }

  /** Forgets an exited process and its output; a later call for its id is not found. */
  remove(sessionId: string): void {
    const process = this.processes.get(sessionId);
    if (process?.exit === null) return;
    if (process?.spool) removeSpool(process.spool.path);
    this.processes.delete(sessionId);
  }

  start(
    command: string,
    request: { workspace?: string | undefined; workdir?: string | undefined } = {},
  ): ManagedProcess {
    if (this.closed) throw new ShuttingDown("the runner is shutting down");
    if (this.liveCount >= MAX_LIVE_PROCESSES) {
      throw new TooManyProcesses(`at most ${MAX_LIVE_PROCESSES} processes may run at once`);
    }
    const sessionId = this.nextId();
    const { child, cgroup, workspace } = launch(this.plan, sessionId, command, request);
    const limits = this.plan.sandbox.limits;
    const watched = {
      startedAt: Date.now(),
      cgroup,
      workspace,
      outputBytes: () => managed.full.totalBytes,
    };
    const limitReached = (hit: LimitHit) => {
      if (managed.exit !== null || managed.limitHit !== null || managed.killRequested) return;
      managed.limitHit = hit;
      void this.end(managed);
    };
    const stopWatching = watchLimits(watched, limits, limitReached);
    const managed: ManagedProcess = {
      sessionId,
      command,
      startedAt: Date.now(),
      full: new OutputBuffer(FULL_HEAD_BYTES, FULL_TAIL_BYTES),
      unread: new OutputBuffer(FULL_HEAD_BYTES, FULL_TAIL_BYTES),
      exit: null,
      endedAt: null,
      exitReported: false,
      killRequested: false,
      finalAnswer: null,
      limitHit: null,
      signalsSent: new Set(),
      spool:
        this.spool === undefined
          ? null
          : new OutputSpool(
              spoolPath(this.spool.dir, sessionId),
              this.spool.maxBytes,
              this.spool.partBytes,
            ),
      fullOutput: null,
      child,
      exited: new Promise<Exit>((resolve) => {
        const collect = (chunk: Buffer) => {
          managed.full.append(chunk);
          managed.unread.append(chunk);
          managed.spool?.append(chunk);
          if (managed.full.totalBytes > limits.outputBytes) limitReached("output_limit");
        };
        child.stdout.on("data", collect);
        child.stderr.on("data", collect);
        child.stdin.on("error", () => {
          // A process that closed its stdin just stops reading; writes are best effort.
        });
        child.once("error", (error) => resolve({ kind: "spawn_failed", message: error.message }));
        // `close` (not `exit`) waits for stdout/stderr to drain, so no output is lost.
        child.once("close", (code, signal) =>
          resolve(exitOf(code, signal, this.sandboxed, managed.signalsSent)),
        );
      }).then(async (exit) => {
        stopWatching();
        // A limit that ended the command by itself (the OOM killer, RLIMIT_FSIZE) is seen only now.
        if (managed.limitHit === null && !managed.killRequested) {
          const disk =
            workspace === null ? null : await new DiskMeter(workspace, limits.diskBytes).measure();
          managed.limitHit = limitPassed(
            watched,
            { ...limits, wallMs: Infinity },
            Date.now(),
            disk,
          );
        }
        removeWhenEmpty(cgroup);
        managed.fullOutput = managed.spool?.finish() ?? null;
        managed.exit = exit;
        managed.endedAt = Date.now();
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
    const rendered = process.unread.render(outputBudget(maxOutputTokens));
    process.unread = new OutputBuffer(FULL_HEAD_BYTES, FULL_TAIL_BYTES);
    const base = {
      output: rendered.text,
      wall_time_ms: Date.now() - startedAt,
      output_bytes_total: process.full.totalBytes,
      output_bytes_dropped: rendered.droppedBytes,
    };
    if (process.exit === null) return { session_id: process.sessionId, ...base };
    process.exitReported = true;
    // Closed: the runner is stopping, and its SIGTERM ended whatever still ran.
    const ending = endingOf(process, this.closed);
    process.finalAnswer = {
      session_id: process.sessionId,
      exit_code: ending.exitCode,
      ...base,
      status: ending.status,
      ended_by: ending.endedBy,
      ...(ending.signal === null ? {} : { signal: ending.signal }),
    };
    return process.finalAnswer;
  }

  async execCommand(input: {
    cmd: string;
    workspace?: string;
    workdir?: string;
    yield_time_ms?: number;
    max_output_tokens?: number;
  }): Promise<ToolAnswer> {
    const startedAt = Date.now();
    const process = this.start(input.cmd, input);
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

  /**
   * Ends the command's whole session (the model asked); false when it had already exited. The
   * escalation goes on after the answer: `killed` waits for the exit only.
   */
  kill(sessionId: string): boolean {
    const process = this.get(sessionId);
    if (process.exit !== null || process.child === null) return false;
    process.killRequested = true;
    void this.end(process);
    return true;
  }

  /** The answer after a kill: waits for the exit, bounded by the kill's own escalation. */
  async killed(sessionId: string, maxOutputTokens?: number): Promise<ToolAnswer> {
    const startedAt = Date.now();
    const process = this.get(sessionId);
    await this.waitUpTo(process, 3 * this.killGraceMs);
    return this.answer(process, startedAt, maxOutputTokens);
  }

  /**
   * Refuses new processes and ends every live command's session; their exits reach the listeners.
   * Settles once each is over, SIGKILL included for what ignored SIGTERM (at most 2 × grace).
   */
  async shutdown(): Promise<void> {
    this.closed = true;
    const live = [...this.processes.values()].filter((process) => process.exit === null);
    await Promise.all(live.map((process) => this.end(process)));
    await Promise.all(live.map((process) => process.exited));
  }

  private end(process: ManagedProcess): Promise<void> {
    if (process.child === null) return Promise.resolve();
    return endSession(
      process.child,
      process.exited,
      this.killGraceMs,
      this.sandboxed,
      process.signalsSent,
    );
  }
}
