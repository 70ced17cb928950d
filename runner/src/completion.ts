// Turns an ended process into exec-inbox's completion body. Sending it is callback-sender.ts's;
// which callbacks to send, and journaling them, is left to the runner.
import type { z } from "zod";
import type { completionBody } from "../../shared/exec-wire";
import { endingOf, foreignSignalNote } from "./ending";
import type { ManagedProcess } from "./process-table";

export type CompletionBody = z.input<typeof completionBody>;

export function completionFor(process: ManagedProcess, shuttingDown: boolean): CompletionBody {
  const output = process.full.render();
  const ending = endingOf(process, shuttingDown);
  // The signal's name rides in the output, the contract's only place for it; the runner wrote that
  // line, the command did not, so output_bytes_total (equal to the full output's bytes) leaves it out.
  const note = ending.foreignSignal === null ? "" : foreignSignalNote(ending.foreignSignal);
  // Only an output the completion cannot carry whole is uploaded: a small one costs nothing more.
  const full = output.truncated ? process.fullOutput : null;
  return {
    status: ending.status,
    exit_code: ending.exitCode,
    ended_by: ending.endedBy,
    output: `${output.text}${note}`,
    output_truncated: output.truncated,
    output_bytes_total: output.totalBytes,
    observed: process.exitReported,
    ...(full === null ? {} : { full_output: full }),
  };
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
