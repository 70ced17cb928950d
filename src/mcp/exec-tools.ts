// The MCP tool `exec_command` and the answers both tools give: the runner runs the command, the
// session object keeps the job. A background command is reserved and its callback armed before the
// model hears of it. `write_stdin` is write-stdin.ts.

import { backgroundNote } from "../../shared/background-note";
import { jobOutcomeLine, outcomeLine, shownExitCode } from "../../shared/outcome-line";
import type { Unasked } from "../domain/askable";
import type { Result } from "../domain/errors";
import { ID_PATTERN } from "../domain/schemas";
import type { JobView } from "../domain/view";
import type { RunnerClient, RunnerFailure } from "./runner-client";
import type { ExecCommandArgs } from "./tool-inputs";

/** A tool's answer in the CallToolResult shape. */
export interface ToolAnswer {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What the tools need of the session object (its RPC methods, over the stub). */
export interface SessionDoor {
  /** With `startedBy`, `handle` is the runner's id: the job takes it, or the first free `<id>:<n>`. */
  reserveJob(cmd: {
    handle: string;
    command: string;
    startedBy?: { runnerSeq: number };
  }): Promise<Result<{ job: JobView; token: string; created: boolean }>>;
  /** The job, and the runner's id of it when the current runner may be asked (else why not). */
  toolJob(cmd: {
    handle: string;
  }): Promise<Result<{ job: JobView; runnerId: string | null; unasked: Unasked | null }>>;
  /** Ends a job no runner will report (`lost`): its callback was not armed, or its task not stored. */
  endUntrackedJob(cmd: { handle: string }): Promise<Result<null>>;
}

export interface ToolContext {
  readonly door: SessionDoor;
  /** The workspace the runner keeps for this session: the session id. */
  readonly sessionId: string;
  /** null: the session names no runner. */
  readonly runner: RunnerClient | null;
  /** The current runner's sequence number: which runner a job was started by. */
  readonly runnerSeq: number | null;
  readonly willWake: boolean;
  readonly callbackUrl: (handle: string, route: "completion" | "heartbeat") => string;
}

export const text = (body: string): ToolAnswer["content"] => [{ type: "text", text: body }];

export const toolError = (message: string): ToolAnswer => ({
  content: text(message),
  isError: true,
});

const NO_RUNNER =
  "This session names no runner: set one with PUT /v1/sessions/{sid}/runner, then call again.";

/** What the model is told of a runner that gave no usable answer; never a token or a body. */
export const runnerSilence = (failure: RunnerFailure): string => {
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
      // A killed, failed or lost command shows no exit code field, whatever the runner sent (the
      // job keeps it; a failed command's code is said in its outcome line).
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
export function exitedAnswer(
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

/**
 * A started command: the answer, and when it went to the background the handle of its job and
 * the runner's id of it (they differ when the session already held that id).
 */
export interface Started {
  readonly answer: ToolAnswer;
  readonly handle: string | null;
  readonly runnerId: string | null;
}

const answered = (answer: ToolAnswer): Started => ({ answer, handle: null, runnerId: null });

export async function startCommand(ctx: ToolContext, args: ExecCommandArgs): Promise<Started> {
  if (ctx.runner === null || ctx.runnerSeq === null) return answered(toolError(NO_RUNNER));
  const started = await ctx.runner.execCommand({
    cmd: args.cmd,
    workspace: ctx.sessionId,
    workdir: args.workdir,
    yield_time_ms: args.yield_time_ms,
    max_output_tokens: args.max_output_tokens,
  });
  if (!started.ok) {
    // Only a refusal is an answer before the command ran; past sending it, it may have started.
    return answered(
      toolError(
        started.reason === "refused"
          ? `The command did not start: ${runnerSilence(started)}.`
          : `The command may be running: ${runnerSilence(started)}. Do not run it again blindly: check its effects in the workspace first.`,
      ),
    );
  }
  const answer = started.value;
  if (answer.exit_code !== undefined) return answered(exitedAnswer(answer, null));
  const runnerId = answer.session_id;
  if (runnerId === undefined || !ID_PATTERN.test(runnerId)) {
    return answered(
      toolError(
        "The command may be running, but the runner's answer named no usable session ID. Do not run it again blindly: check its effects in the workspace first.",
      ),
    );
  }
  return background(ctx, ctx.runner, ctx.runnerSeq, args.cmd, runnerId, answer.output);
}

/** What the model is told of a command stopped because the service could not track it. */
async function stopped(runner: RunnerClient, runnerId: string, why: string): Promise<ToolAnswer> {
  const killed = await runner.kill(runnerId);
  return toolError(
    killed.ok
      ? `The command went to the background but ${why}; it was stopped.`
      : `The command went to the background but ${why}, and ${runnerSilence(killed)} when asked to stop it: it may still be running under the runner's session ID ${runnerId}. Do not run it again blindly.`,
  );
}

/**
 * Reserves the job and arms the runner's callback, in that order, before any answer: a command the
 * service cannot report is stopped and said, never promised. The runner is asked once per call,
 * so its id is never a retry of a job the session holds: such a job gets a handle of its own.
 */
async function background(
  ctx: ToolContext,
  runner: RunnerClient,
  runnerSeq: number,
  command: string,
  runnerId: string,
  output: string,
): Promise<Started> {
  let reserved: Awaited<ReturnType<SessionDoor["reserveJob"]>>;
  try {
    reserved = await ctx.door.reserveJob({
      handle: runnerId,
      command,
      startedBy: { runnerSeq },
    });
  } catch (error) {
    // The session object could not serve (restarting, over a limit): the command must not run on.
    console.error(`MCP reserve failed: ${error instanceof Error ? error.name : "error"}`);
    return answered(await stopped(runner, runnerId, "the session could not track it just now"));
  }
  if (!reserved.ok) {
    return answered(
      await stopped(
        runner,
        runnerId,
        `could not be tracked (${reserved.code}: ${reserved.detail})`,
      ),
    );
  }
  const handle = reserved.value.job.handle;
  const armed = await runner.armCallback(runnerId, {
    url: ctx.callbackUrl(handle, "completion"),
    token: reserved.value.token,
    heartbeat_url: ctx.callbackUrl(handle, "heartbeat"),
    heartbeat_timeout_ms: reserved.value.job.heartbeat_timeout_ms,
  });
  if (!armed.ok) {
    await runner.kill(runnerId);
    await endUntracked(ctx, handle);
    return answered(
      toolError(
        `The command went to the background but ${runnerSilence(armed)} when asked to report its end; it was asked to stop. Check with write_stdin(session_id="${handle}").`,
      ),
    );
  }
  return { answer: backgroundAnswer(handle, output, ctx.willWake), handle, runnerId };
}

/**
 * Ends a job no runner will report, so it never stays running for ever; a session object that
 * cannot serve leaves it to the operator's mark (logged, never thrown: the answer is said anyway).
 */
async function endUntracked(ctx: ToolContext, handle: string): Promise<void> {
  try {
    const ended = await ctx.door.endUntrackedJob({ handle });
    if (!ended.ok) console.error(`MCP end of an untracked job refused: ${ended.code}`);
  } catch (error) {
    console.error(
      `MCP end of an untracked job failed: ${error instanceof Error ? error.name : "error"}`,
    );
  }
}

/**
 * The message of a task that could not be stored (the session object failed): its command is
 * stopped, since no client will ever read it, or said to be maybe running when it cannot be.
 */
export async function untrackedTask(ctx: ToolContext, started: Started): Promise<string> {
  const base = "The task could not be stored";
  if (started.handle === null || started.runnerId === null || ctx.runner === null) {
    return `${base}; the command had already ended.`;
  }
  const killed = await ctx.runner.kill(started.runnerId);
  await endUntracked(ctx, started.handle);
  return killed.ok
    ? `${base}; its command (session ID ${started.handle}) was stopped.`
    : `${base}, and its command could not be stopped: it may still be running as session ID ${started.handle}. Do not run it again blindly.`;
}
