// Turns an ended process into exec-inbox's completion body. Sending it is callback-sender.ts's;
// which callbacks to send, and journaling them, is left to the runner.
import type { z } from "zod";
import type { completionBody } from "../../shared/exec-wire";
import type { ManagedProcess } from "./process-table";

export type CompletionBody = z.input<typeof completionBody>;

export function completionFor(process: ManagedProcess, shuttingDown: boolean): CompletionBody {
  const exit = process.exit;
  const output = process.full.render();
  // Only an output the completion cannot carry whole is uploaded: a small one costs nothing more.
  const full = output.truncated ? process.fullOutput : null;
  const base = {
    output: output.text,
    output_truncated: output.truncated,
    output_bytes_total: output.totalBytes,
    observed: process.exitReported,
    ...(full === null ? {} : { full_output: full }),
  };
  if (exit === null || exit.kind === "spawn_failed") {
    return { ...base, status: "failed", exit_code: null, ended_by: "process" };
  }
  const endedBy = process.killRequested
    ? "kill_request"
    : (process.limitHit ?? (shuttingDown ? "runner_shutdown" : "process"));
  // A limit ends the command however its shell then exits (an OOM-killed child, SIGXFSZ).
  if (exit.kind === "signaled" || process.limitHit !== null)
    return { ...base, status: "killed", exit_code: null, ended_by: endedBy };
  return { ...base, status: "completed", exit_code: exit.exitCode, ended_by: endedBy };
}

/** The runner died while the process ran: its outcome is unknown. */
export const lostCompletion = (): CompletionBody => ({
  status: "lost",
  exit_code: null,
  output: "",
  output_truncated: false,
  output_bytes_total: 0,
  ended_by: "runner_shutdown",
  observed: false,
});
