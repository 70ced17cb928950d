// The MCP tool `write_stdin`: a finished job is read back from the session, never from a runner that
// may be gone; a running one is asked of the runner that started it, and of no other.

import type { Unasked } from "../domain/askable";
import { ID_PATTERN } from "../domain/schemas";
import type { JobView } from "../domain/view";
import {
  exitedAnswer,
  finishedAnswer,
  runnerSilence,
  type ToolAnswer,
  type ToolContext,
  text,
  toolError,
} from "./exec-tools";
import type { WriteStdinArgs } from "./tool-inputs";

/** Why a running job's runner is not asked about it, as the model reads it. */
export const UNASKED: Record<Unasked, string> = {
  no_runner: "this session names no runner now",
  not_started_here:
    "it was not started through this endpoint, so the session's runner is not asked about it (its result arrives when whoever runs it reports it)",
  replaced:
    "the runner that started it was replaced, so it cannot be asked (its result still arrives if that runner reports it)",
  superseded:
    "the runner has since given its session ID to a newer command, so it cannot be asked about this one (its result still arrives if the runner reports it)",
};

export async function writeStdin(ctx: ToolContext, args: WriteStdinArgs): Promise<ToolAnswer> {
  const handle = args.session_id;
  const unknown = toolError(`No command with session ID ${handle} belongs to this session.`);
  if (!ID_PATTERN.test(handle)) return unknown;
  const found = await ctx.door.toolJob({ handle });
  if (!found.ok) {
    return found.code === "job_expired"
      ? toolError(`The result of session ID ${handle} is no longer kept.`)
      : unknown;
  }
  const { job, runnerId, unasked } = found.value;
  // The stored result stands: the runner is not asked, and may be gone.
  if (job.status !== "running") return finishedAnswer({ ...job, status: job.status });
  if (ctx.runner === null) return progressAnswer(job, UNASKED.no_runner);
  // An id the runner gave another command (a replaced runner's, a reused one, a kit's own
  // runner's) may name another process, even another session's: never asked.
  if (runnerId === null) return progressAnswer(job, UNASKED[unasked ?? "not_started_here"]);
  const polled = await ctx.runner.writeStdin({
    session_id: runnerId,
    chars: args.chars,
    yield_time_ms: args.yield_time_ms,
    max_output_tokens: args.max_output_tokens,
  });
  if (!polled.ok) return progressAnswer(job, runnerSilence(polled));
  const answer = polled.value;
  if (answer.exit_code !== undefined) return exitedAnswer(answer, handle);
  return {
    content: text(
      answer.output === ""
        ? `Process running with session ID ${handle}`
        : `Process running with session ID ${handle}\n${answer.output}`,
    ),
    structuredContent: { session_id: handle, status: "running", output: answer.output },
  };
}

/** A running job whose runner gave no answer: its last progress, and the plain reason. */
function progressAnswer(job: JobView, why: string): ToolAnswer {
  const tail = job.progress?.output_tail ?? "";
  const since = job.progress === null ? "" : ` (last progress at ${job.progress.at})`;
  const lines = [
    `Process running with session ID ${job.handle}, as far as the service knows: ${why}.`,
    tail === "" ? `No progress was reported${since}.` : `Last output reported${since}:\n${tail}`,
  ];
  return {
    content: text(lines.join("\n")),
    structuredContent: {
      session_id: job.handle,
      status: "running",
      output: tail,
      runner_answered: false,
    },
  };
}
