// How a command ended, in the terms of exec-inbox's completion (status, exit_code, ended_by) plus
// the signal, for the completion and for the runner's own final answer. Sending either is the caller's.
import type { Exit } from "./exit-status";
import type { LimitHit } from "./limit-watch";

export interface Ending {
  readonly status: "completed" | "failed" | "killed";
  readonly exitCode: number | null;
  readonly endedBy: "process" | "kill_request" | "runner_shutdown" | LimitHit;
  /** The signal that ended it, when one did. */
  readonly signal: string | null;
  /**
   * A signal the runner did not send (the OOM killer, a `kill -9` from outside, the command's own
   * crash): the completion names it in the output, the only place the contract leaves for it.
   */
  readonly foreignSignal: string | null;
}

interface Ended {
  readonly exit: Exit | null;
  readonly killRequested: boolean;
  readonly limitHit: LimitHit | null;
}

export function endingOf(process: Ended, shuttingDown: boolean): Ending {
  const exit = process.exit;
  if (exit === null || exit.kind === "spawn_failed") {
    return {
      status: "failed",
      exitCode: null,
      endedBy: "process",
      signal: null,
      foreignSignal: null,
    };
  }
  const endedBy = process.killRequested
    ? "kill_request"
    : (process.limitHit ?? (shuttingDown ? "runner_shutdown" : "process"));
  const signal = exit.kind === "signaled" ? exit.signal : null;
  // A limit ends the command however its shell then exits (an OOM-killed child, SIGXFSZ).
  if (signal !== null || process.limitHit !== null) {
    return {
      status: "killed",
      exitCode: null,
      endedBy,
      signal,
      foreignSignal: endedBy === "process" ? signal : null,
    };
  }
  return {
    status: "completed",
    exitCode: exit.kind === "exited" ? exit.exitCode : null,
    endedBy,
    signal: null,
    foreignSignal: null,
  };
}

/** Signals a process sends itself when it crashes (a bad address, a failed assert(), …). */
const CRASH_SIGNALS: ReadonlySet<string> = new Set([
  "SIGSEGV",
  "SIGBUS",
  "SIGFPE",
  "SIGILL",
  "SIGABRT",
]);

/**
 * What most likely sent a signal the runner did not send: the OOM killer and an outside `kill -9`
 * send SIGKILL; a crash ends a command by its own SIGSEGV, SIGABRT and the like; of any other
 * signal nothing more is known, so nothing more is said.
 */
function likelySender(signal: string): string {
  if (signal === "SIGKILL") return " (the OOM killer, or a kill from outside)";
  if (CRASH_SIGNALS.has(signal)) return " (the command crashed)";
  return "";
}

/** The line the completion's output ends with when a signal the runner did not send ended it. */
export const foreignSignalNote = (signal: string): string =>
  `\n[exec-inbox-runner] killed by ${signal}, a signal the runner did not send${likelySender(signal)}\n`;
