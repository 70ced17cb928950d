// The model's `exec_command` and `write_stdin` tools for the Vercel AI SDK, wired to the exec runner
// and to exec-inbox. The caller owns the session's set of running handles (via the two callbacks).

import { type ExecInboxClient, ExecInboxError } from "@exec-inbox/client";
import { tool } from "ai";
import { z } from "zod";
import { MAX_COMMAND_BYTES } from "../shared/exec-wire";
import { capText, outputBudget } from "../shared/output-budget";
import {
  backgroundNote,
  INPUT_NOT_SENT,
  jobOutcomeLine,
  lostNote,
  noCommand,
  outcomeLine,
  RUNNER_FORGOT_NOTE,
  shownExitCode,
  unreachableNote,
  untakenNote,
} from "./model-texts";
import { outputTools } from "./output-tools";
import { retrying } from "./retry";
import { type ExecAnswer, type RunnerClient, RunnerError } from "./runner-client";
import type { ToolCallJournal } from "./tool-call-journal";

export interface ExecToolContext {
  readonly inbox: ExecInboxClient;
  readonly runner: RunnerClient;
  readonly sessionId: string;
  /** A command outlived its yield, and exec-inbox will report its end: the turn must wait for it. */
  readonly onBackground: (handle: string) => void;
  /** The model has seen the command end (or been told its outcome is unknown). */
  readonly onEnded: (handle: string) => void;
  /** Reserved with every background job: silence this long makes exec-inbox declare it lost. */
  readonly heartbeatTimeoutMs?: number;
  /** Written before the runner is asked and as it answers: a restarted host never runs it again. */
  readonly journal?: ToolCallJournal;
}

/**
 * The exec tools' context for one model turn: `running` learns which commands go to the background
 * and end, and `started` keeps those that still run across the turn's retried attempts.
 */
export function trackingContext(
  base: Pick<ExecToolContext, "inbox" | "runner" | "sessionId" | "heartbeatTimeoutMs">,
  running: Set<string>,
  started: Set<string>,
): ExecToolContext {
  return {
    inbox: base.inbox,
    runner: base.runner,
    sessionId: base.sessionId,
    onBackground: (handle) => {
      running.add(handle);
      started.add(handle);
    },
    onEnded: (handle) => {
      running.delete(handle);
      started.delete(handle);
    },
    ...(base.heartbeatTimeoutMs === undefined
      ? {}
      : { heartbeatTimeoutMs: base.heartbeatTimeoutMs }),
  };
}

const execCommandInput = z.object({
  // exec-inbox refuses to reserve a longer command: the runner must never start one.
  cmd: z
    .string()
    .min(1)
    .refine((cmd) => new TextEncoder().encode(cmd).byteLength <= MAX_COMMAND_BYTES, {
      message: `cmd is longer than ${MAX_COMMAND_BYTES} bytes (UTF-8)`,
    })
    .describe(`The shell command, run with bash -c (at most ${MAX_COMMAND_BYTES} bytes).`),
  workdir: z.string().min(1).optional().describe("Working directory."),
  yield_time_ms: z
    .int()
    .min(250)
    .max(30_000)
    .optional()
    .describe("How long to wait for output before the command goes to the background."),
  max_output_tokens: z.int().min(1).max(1_000_000).optional(),
});

const writeStdinInput = z.object({
  session_id: z.string().min(1).describe("The session_id exec_command returned."),
  chars: z.string().optional().describe("Characters to write to stdin; empty to only read."),
  yield_time_ms: z.int().min(0).max(30_000).optional(),
  max_output_tokens: z.int().min(1).max(1_000_000).optional(),
});

/**
 * A runner's answer for a command that exited, led by its outcome (outcome-line.ts): the model
 * reads how it ended before anything else. A runner that names no status is read by its exit code
 * alone, and no exit code is never a success.
 */
export function withOutcome<A extends ExecAnswer>(answer: A): { outcome: string } & A {
  const outcome = outcomeLine({
    status: answer.status ?? null,
    exitCode: answer.exit_code ?? null,
    endedBy: answer.ended_by ?? null,
    signal: answer.signal ?? null,
    outputTruncated: (answer.output_bytes_dropped ?? 0) > 0,
    outputBytesTotal: answer.output_bytes_total ?? null,
  });
  // A killed command shows no exit code beside its outcome, whatever the runner sent.
  const exitCode =
    answer.exit_code === undefined
      ? {}
      : { exit_code: shownExitCode(answer.status, answer.exit_code) };
  return { outcome, ...answer, ...exitCode };
}

/** The runner no longer knows the process (restarted, or pruned it): exec-inbox kept the result. */
async function pullFromInbox(ctx: ExecToolContext, handle: string, maxOutputTokens?: number) {
  try {
    const job = await ctx.inbox.getJob(ctx.sessionId, handle);
    if (job.status === "running") {
      ctx.onEnded(handle);
      return {
        outcome: outcomeLine({
          status: "lost",
          exitCode: null,
          endedBy: null,
          outputTruncated: false,
          outputBytesTotal: null,
        }),
        session_id: handle,
        status: "unknown",
        note: RUNNER_FORGOT_NOTE,
      };
    }
    ctx.onEnded(handle);
    // Capped like the runner's answer: a pull must not flood the model's context.
    const capped = capText(job.output ?? "", outputBudget(maxOutputTokens));
    return {
      outcome: jobOutcomeLine(job, capped.truncated),
      session_id: handle,
      status: job.status,
      exit_code: shownExitCode(job.status, job.exit_code),
      output: capped.text,
      output_truncated: job.output_truncated || capped.truncated,
      ...(job.status === "lost" ? { note: lostNote(job.ended_by) } : {}),
    };
  } catch (error) {
    if (error instanceof ExecInboxError && error.problem.status === 404) {
      throw new Error(noCommand(handle, false));
    }
    throw error;
  }
}

/** A job whose runner is unreachable: its result if it has one, else its last heartbeat's progress. */
async function lastKnown(ctx: ExecToolContext, handle: string, maxOutputTokens?: number) {
  const job = await ctx.inbox.getJob(ctx.sessionId, handle);
  if (job.status !== "running") return pullFromInbox(ctx, handle, maxOutputTokens);
  if (job.progress === null) return null;
  const capped = capText(job.progress.output_tail, outputBudget(maxOutputTokens));
  return {
    session_id: handle,
    status: "running",
    output: capped.text,
    output_truncated: true,
    ...(job.progress.output_bytes_total === null
      ? {}
      : { output_bytes_total: job.progress.output_bytes_total }),
    note: unreachableNote(job.progress.at),
  };
}

/** The exec tools, and the full-output tools beside them (output-tools.ts). */
export function execTools(ctx: ExecToolContext) {
  return {
    ...outputTools(ctx),
    exec_command: tool({
      description:
        "Run a shell command. Returns its outcome, exit_code and output if it ends within yield_time_ms; otherwise a session_id while it keeps running in the background, and a note that says whether you will be told when it ends. Read a background command with write_stdin.",
      inputSchema: execCommandInput,
      execute: async (
        input,
        { toolCallId },
      ): Promise<ExecAnswer & { note?: string; status?: string }> => {
        await ctx.journal?.begin(toolCallId, input);
        // The session's own workspace: another agent's files are not in the command's view.
        const answer = await ctx.runner.execCommand({ ...input, workspace: ctx.sessionId });
        const handle = answer.session_id;
        if (handle === undefined) {
          await ctx.journal?.answered(toolCallId, answer);
          return withOutcome(answer);
        }
        await ctx.journal?.handed(toolCallId, handle);
        // Reserve and arm before the model hears of the handle: a completion that comes between
        // the two is held by the runner until armed, so none can be missed. Both are idempotent.
        let willWake: boolean;
        try {
          const reservation = await retrying(() =>
            ctx.inbox.reserveJob(ctx.sessionId, {
              handle,
              command: input.cmd,
              ...(ctx.heartbeatTimeoutMs === undefined
                ? {}
                : { heartbeat_timeout_ms: ctx.heartbeatTimeoutMs }),
            }),
          );
          await retrying(() => ctx.runner.armCallback(handle, reservation.callback));
          // A service that does not say is taken at its silence: no wake is promised.
          willWake = reservation.will_wake === true;
        } catch (error) {
          // Nobody would be told when it ends: a command must not run unwatched.
          const killed = await retrying(() => ctx.runner.kill(handle)).then(
            () => true,
            () => false,
          );
          // Led by its outcome like every answer for an ended command: stopped, or not known.
          const untaken = {
            outcome: outcomeLine({
              status: killed ? "killed" : "lost",
              exitCode: null,
              endedBy: killed ? "kill_request" : null,
              outputTruncated: false,
              outputBytesTotal: null,
            }),
            ...answer,
            session_id: handle,
            status: killed ? "killed" : "unwatched",
            note: untakenNote(killed, error),
          };
          // Its result from here on: recovery must not reserve a handle the tool gave up on.
          await ctx.journal?.answered(toolCallId, untaken);
          return untaken;
        }
        ctx.onBackground(handle);
        return { ...answer, note: backgroundNote(handle, willWake) };
      },
    }),
    write_stdin: tool({
      description:
        "Write characters to a running command's stdin (empty chars: only read), returning new output; once it has ended, its outcome first, then exit_code and output.",
      inputSchema: writeStdinInput,
      execute: async (input, { toolCallId }) => {
        // Runner handles are global to the runner: only a job of this session may be touched.
        try {
          await retrying(() => ctx.inbox.getJob(ctx.sessionId, input.session_id));
        } catch (error) {
          if (error instanceof ExecInboxError && error.problem.status === 404) {
            throw new Error(noCommand(input.session_id, true));
          }
          throw error;
        }
        // Characters sent cannot be taken back: journaled first, so a restarted host never sends
        // them twice. A read (empty chars) can be asked again and is not journaled.
        const sends = (input.chars ?? "") !== "";
        if (!sends) return writeStdin(ctx, input);
        await ctx.journal?.begin(toolCallId, input, "write_stdin");
        const answer = await writeStdin(ctx, input);
        await ctx.journal?.answered(toolCallId, answer);
        return answer;
      },
    }),
  };
}

/** write_stdin once its handle is known to be this session's: the runner, or exec-inbox's truth. */
async function writeStdin(ctx: ExecToolContext, input: z.infer<typeof writeStdinInput>) {
  try {
    const answer = await ctx.runner.writeStdin(input);
    if (answer.exit_code === undefined) return answer;
    ctx.onEnded(input.session_id);
    return withOutcome(answer);
  } catch (error) {
    if (error instanceof RunnerError && error.status === 404) {
      return pullFromInbox(ctx, input.session_id, input.max_output_tokens);
    }
    // The runner cannot be reached (no answer, or a 5xx): what exec-inbox last heard of the
    // job beats nothing. Its other refusals (401, 422) are the caller's to see.
    const unreachable = !(error instanceof RunnerError) || error.status >= 500;
    const known = unreachable
      ? await lastKnown(ctx, input.session_id, input.max_output_tokens).catch(() => null)
      : null;
    if (known === null) throw error;
    return input.chars
      ? { ...known, note: `${INPUT_NOT_SENT} ${String(known.note ?? "")}`.trim() }
      : known;
  }
}
