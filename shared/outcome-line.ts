// The first line of every text a model reads about a finished command (the provider message, the
// kits' write_stdin answer, the MCP tool result): how it ended, said so it cannot be misread.
// Where the facts come from (a stored result, a runner's answer) is left to each caller.

/** How a command ended, as a result or a runner's final answer says it. */
export interface OutcomeFacts {
  /** completed | failed | killed | lost; null when the source names none (another runner's answer). */
  readonly status: string | null;
  readonly exitCode: number | null;
  /** Who ended it (contract §9's `ended_by`); null when unknown. */
  readonly endedBy: string | null;
  /** The signal that ended it, where the runner named one (e.g. SIGKILL). */
  readonly signal?: string | null;
  /** True when the output the model reads was cut. */
  readonly outputTruncated: boolean;
  /** Every byte the command wrote; shown only when the output was cut. */
  readonly outputBytesTotal: number | null;
}

const NOT_REPORTED = "not reported";

/** What ended a command other than its own exit, said before its `ended_by` value. */
const ENDED_BY_WORDS: Readonly<Record<string, string>> = {
  kill_request: "a kill request",
  runner_shutdown: "the runner's shutdown",
  runner_timeout: "the runner's timeout",
  memory_limit: "the runner's memory limit",
  pids_limit: "the runner's process limit",
  output_limit: "the runner's output limit",
  disk_limit: "the runner's disk limit",
};

/**
 * For an exit that something else brought about (a kill request answered by `trap 'exit 0' TERM`),
 * e.g. ` after a kill request (kill_request)`: such an exit 0 is no plain success. Empty for the
 * command's own exit (`process`) or when no one said.
 */
function after(endedBy: string | null): string {
  if (endedBy === null || endedBy === "process") return "";
  return ` after ${ENDED_BY_WORDS[endedBy] ?? "the end it was given"} (${endedBy})`;
}

/**
 * The exit code a model is shown as a field: none for a killed, failed or lost command. A program
 * reads `exit_code: 0` as success, and the completion API lets a runner send `failed` with any
 * code; a failed command's code, when it has one, is said in its outcome line instead.
 */
export const shownExitCode = (
  status: string | null | undefined,
  exitCode: number | null | undefined,
): number | null =>
  status === "killed" || status === "lost" || status === "failed" ? null : (exitCode ?? null);

/**
 * The outcome proper: one of `exited with code N`, `killed (…)`, `failed (…)`,
 * `outcome unknown (…)`.
 */
function outcome(facts: OutcomeFacts): string {
  const why = [facts.endedBy ?? NOT_REPORTED, ...(facts.signal ? [facts.signal] : [])].join(", ");
  switch (facts.status) {
    case "killed":
      return `killed (${why})`;
    case "lost":
      return `outcome unknown (${why})`;
    case "failed":
      // A failed command never reads as an exit, even with the code its runner sent (maybe 0).
      return facts.exitCode === null
        ? `failed without an exit code (${why})`
        : `failed (exit code ${facts.exitCode}, ${why})`;
    default:
      // Only a command that ended as completed, or whose runner named no status, exited.
      if (facts.exitCode !== null)
        return `exited with code ${facts.exitCode}${after(facts.endedBy)}`;
      return `outcome unknown (${why})`;
  }
}

/**
 * e.g. `exited with code 0`, `killed (process, SIGKILL)`, `failed (exit code 2, process)`,
 * `outcome unknown (heartbeat_timeout)`,
 * `exited with code 1; output cut, 10485760 bytes in total`, `exited with code 0 after a kill
 * request (kill_request)`.
 */
export function outcomeLine(facts: OutcomeFacts): string {
  const cut =
    facts.outputTruncated && facts.outputBytesTotal !== null
      ? `; output cut, ${facts.outputBytesTotal} bytes in total`
      : facts.outputTruncated
        ? "; output cut"
        : "";
  return `${outcome(facts)}${cut}`;
}

/** A job as the API shows it (the pull, the MCP result): the fields its outcome line reads. */
interface JobOutcomeFields {
  readonly status: string;
  readonly exit_code: number | null;
  readonly ended_by: string | null;
  readonly output_truncated: boolean;
  readonly output_bytes_total: number;
  /** False: the runner sent no total for a cut output (absent in an older service's answer). */
  readonly output_bytes_total_known?: boolean;
}

/** The outcome line of a job with its result; `cut`: the caller cut its output further. */
export const jobOutcomeLine = (job: JobOutcomeFields, cut = false): string =>
  outcomeLine({
    status: job.status,
    exitCode: job.exit_code,
    endedBy: job.ended_by,
    outputTruncated: job.output_truncated || cut,
    outputBytesTotal: job.output_bytes_total_known === false ? null : job.output_bytes_total,
  });
