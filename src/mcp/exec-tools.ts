// The MCP tools `exec_command` and `write_stdin`: the runner runs the command, the session object
// keeps the job. A background command is reserved and its callback armed before the model hears
// of it; a finished one is read back from the session, never from a runner that may be gone.

import { backgroundNote } from "../../shared/background-note";
import { jobOutcomeLine, outcomeLine, shownExitCode } from "../../shared/outcome-line";
import type { Result } from "../domain/errors";
import { ID_PATTERN } from "../domain/schemas";
import type { JobView } from "../domain/view";
import type { RunnerClient, RunnerFailure } from "./runner-client";
import type { ExecCommandArgs, WriteStdinArgs } from "./tool-inputs";

/** A tool's answer in the CallToolResult shape. */
export interface ToolAnswer {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What the tools need of the session object (its RPC methods, over the stub). */
export interface SessionDoor {
  reserveJob(cmd: {
    handle: string;
    command: string;
  }): Promise<Result<{ job: JobView; token: string; created: boolean }>>;
  getJob(cmd: { handle: string }): Promise<Result<JobView>>;
}

export interface ToolContext {
  readonly door: SessionDoor;
  /** The workspace the runner keeps for this session: the session id. */
  readonly sessionId: string;
  /** null: the session names no runner. */
  readonly runner: RunnerClient | null;
  readonly willWake: boolean;
  readonly callbackUrl: (handle: string, route: "completion" | "heartbeat") => string;
}

const text = (body: string): ToolAnswer["content"] => [{ type: "text", text: body }];

export const toolError = (message: string): ToolAnswer => ({
  content: text(message),
  isError: true,
});

const NO_RUNNER =
  "This session names no runner: set one with PUT /v1/sessions/{sid}/runner, then call again.";

/** What the model is told of a runner that gave no usable answer; never a token or a body. */
const runnerSilence = (failure: RunnerFailure): string => {
  switch (failure.reason) {
    case "timeout":
      return "the runner did not answer in time";
    case "too_large":
      return "the runner's answer was too large to read";
    case "garbage":
      return "the runner's answer could not be read";
    case "unreachable":
      return "the runner could not be reached";
    case "refused":
      return `the runner refused the call (${failure.status}${failure.code === null ? "" : ` ${failure.code}`})`;
  }
};

/** A command that outlived its yield, reserved and armed: the answer the model reads. */
export function backgroundAnswer(handle: string, output: string, willWake: boolean): ToolAnswer {
  const lines = [`Process running with session ID ${handle}`];
  if (output !== "") lines.push(output);
  lines.push(backgroundNote(handle, willWake));
  return {
    content: text(lines.join("\n")),
    structuredContent: { session_id: handle, output, will_wake: willWake },
  };
}

/** A job that has its result, read from the session: the outcome first, then the output. */
export function finishedAnswer(job: JobView): ToolAnswer {
  const outcome = jobOutcomeLine(job);
  return {
    content: text(job.output === "" ? outcome : `${outcome}\n${job.output}`),
    structuredContent: {
      session_id: job.handle,
      status: job.status,
      // A killed or lost command shows no exit code, whatever the runner sent (the job keeps it).
      exit_code: shownExitCode(job.status, job.exit_code),
      ended_by: job.ended_by,
      output: job.output,
      output_truncated: job.output_truncated,
      // Null when the runner sent no total for a cut output: the stored figure is not the command's.
      output_bytes_total: job.output_bytes_total_known === false ? null : job.output_bytes_total,
    },
    isError: !(job.status === "completed" && job.exit_code === 0),
  };
}

/** The runner's answer for a command that ended (within a yield, or seen by a poll). */
function exitedAnswer(
  answer: {
    exit_code?: number | null | undefined;
    output: string;
    status?: string | undefined;
    ended_by?: string | undefined;
    signal?: string | undefined;
    output_bytes_dropped?: number | undefined;
    output_bytes_total?: number | undefined;
  },
  sessionId: string | null,
): ToolAnswer {
  const exitCode = answer.exit_code ?? null;
  // What the runner said of its end; a runner that names no status has exited only with a code.
  const status = answer.status ?? (exitCode === null ? null : "completed");
  const outcome = outcomeLine({
    status,
    exitCode,
    endedBy: answer.ended_by ?? null,
    signal: answer.signal ?? null,
    outputTruncated: (answer.output_bytes_dropped ?? 0) > 0,
    outputBytesTotal: answer.output_bytes_total ?? null,
  });
  return {
    content: text(answer.output === "" ? outcome : `${outcome}\n${answer.output}`),
    structuredContent: {
      ...(sessionId === null ? {} : { session_id: sessionId }),
      exit_code: shownExitCode(status, exitCode),
      output: answer.output,
      status: status ?? "unknown",
    },
    isError: !(status === "completed" && exitCode === 0),
  };
}

export const execCommand = async (ctx: ToolContext, args: ExecCommandArgs): Promise<ToolAnswer> =>
  (await startCommand(ctx, args)).answer;

/** A started command: the answer, and the handle of its job when it went to the background. */
interface Started {
  readonly answer: ToolAnswer;
  readonly handle: string | null;
}

const answered = (answer: ToolAnswer): Started => ({ answer, handle: null });

export async function startCommand(ctx: ToolContext, args: ExecCommandArgs): Promise<Started> {
  if (ctx.runner === null) return answered(toolError(NO_RUNNER));
  const started = await ctx.runner.execCommand({
    cmd: args.cmd,
    workspace: ctx.sessionId,
    workdir: args.workdir,
    yield_time_ms: args.yield_time_ms,
    max_output_tokens: args.max_output_tokens,
  });
  if (!started.ok) {
    return answered(toolError(`The command may not have started: ${runnerSilence(started)}.`));
  }
  const answer = started.value;
  if (answer.exit_code !== undefined) return answered(exitedAnswer(answer, null));
  const handle = answer.session_id;
  if (handle === undefined || !ID_PATTERN.test(handle)) {
    return answered(
      toolError(
        "The command may have started, but the runner's answer named no usable session ID.",
      ),
    );
  }
  return background(ctx, ctx.runner, args.cmd, handle, answer.output);
}

/**
 * Reserves the job and arms the runner's callback, in that order, before any answer: a command the
 * service cannot report is stopped and said, never promised.
 */
async function background(
  ctx: ToolContext,
  runner: RunnerClient,
  command: string,
  handle: string,
  output: string,
): Promise<Started> {
  const reserved = await ctx.door.reserveJob({ handle, command });
  if (!reserved.ok) {
    await runner.kill(handle);
    return answered(
      toolError(
        `The command went to the background but could not be tracked (${reserved.code}: ${reserved.detail}); it was stopped.`,
      ),
    );
  }
  const armed = await runner.armCallback(handle, {
    url: ctx.callbackUrl(handle, "completion"),
    token: reserved.value.token,
    heartbeat_url: ctx.callbackUrl(handle, "heartbeat"),
    heartbeat_timeout_ms: reserved.value.job.heartbeat_timeout_ms,
  });
  if (!armed.ok) {
    await runner.kill(handle);
    return answered(
      toolError(
        `The command went to the background but ${runnerSilence(armed)} when asked to report its end; it was asked to stop. Check with write_stdin(session_id="${handle}").`,
      ),
    );
  }
  return { answer: backgroundAnswer(handle, output, ctx.willWake), handle };
}

export async function writeStdin(ctx: ToolContext, args: WriteStdinArgs): Promise<ToolAnswer> {
  const handle = args.session_id;
  const unknown = toolError(`No command with session ID ${handle} belongs to this session.`);
  if (!ID_PATTERN.test(handle)) return unknown;
  const found = await ctx.door.getJob({ handle });
  if (!found.ok) {
    return found.code === "job_expired"
      ? toolError(`The result of session ID ${handle} is no longer kept.`)
      : unknown;
  }
  const job = found.value;
  // The stored result stands: the runner is not asked, and may be gone.
  if (job.status !== "running") return finishedAnswer({ ...job, status: job.status });
  if (ctx.runner === null) return progressAnswer(job, "this session names no runner now");
  const polled = await ctx.runner.writeStdin({
    session_id: handle,
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
