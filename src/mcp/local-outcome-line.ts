// LOCAL STAND-IN, to be replaced by the shared function for a finished command's first line at
// merge: the outcome stated first, so a killed or lost command never reads as a success.

/** What the first line reads of a finished command (a job's result, or the runner's answer). */
export interface FinishedCommand {
  readonly status: "completed" | "failed" | "killed" | "lost";
  readonly exit_code: number | null;
  readonly ended_by: string | null;
  readonly output_truncated: boolean;
  readonly output_bytes_total: number;
}

/** `exited with code N`, `killed (<ended_by>)` or `outcome unknown (<ended_by>)`, and the cut. */
export function localOutcomeLine(command: FinishedCommand): string {
  const endedBy = command.ended_by ?? "unknown";
  const outcome =
    command.status === "lost"
      ? `outcome unknown (${endedBy})`
      : command.status === "killed" || command.exit_code === null
        ? `killed (${endedBy})`
        : `exited with code ${command.exit_code}`;
  return command.output_truncated
    ? `${outcome}; output cut, ${command.output_bytes_total} bytes in total`
    : outcome;
}
