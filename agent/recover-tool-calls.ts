// Recovery without re-running: the result each journaled call (tool-call-journal.ts) gets from
// exec-inbox's truth when the turn that made it was never stored, and the result each call a
// compaction left open gets. How a result enters the conversation is the kit's.
import { type ExecInboxClient, ExecInboxError, type JobView } from "@exec-inbox/client";
import { capText, outputBudget } from "../shared/output-budget";
import { withOutcome } from "./exec-tools";
import {
  backgroundNote,
  jobOutcomeLine,
  lostNote,
  RECOVERED_ANSWERED,
  RECOVERED_FROM_JOURNAL,
  RECOVERED_INPUT_MAYBE_SENT,
  RECOVERED_NOT_AGAIN,
  RECOVERED_STORED,
  RECOVERED_UNKNOWN_OUTCOME,
  recoveredTailNote,
  recoveredUnknownNote,
  shownExitCode,
} from "./model-texts";
import { retrying } from "./retry";
import type { ExecAnswer, RunnerClient } from "./runner-client";
import type { JournaledCall } from "./tool-call-journal";

// The journal's own module; this subpath still names it.
export {
  type JournaledCall,
  type JournaledTool,
  type JournalWrite,
  journalEntry,
  type PersistedJournal,
  persistedJournal,
  type ToolCallJournal,
} from "./tool-call-journal";

/** A call with the result recovery gives it; `running` is its job's handle while it runs. */
export interface RecoveredToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly result: Readonly<Record<string, unknown>>;
  readonly running: string | null;
}

/**
 * What recovery needs to take a journaled handle exec-inbox never reserved (the host stopped
 * between the runner's answer and the reservation), as exec_command would.
 */
export interface RecoveryOptions {
  readonly runner?: Pick<RunnerClient, "armCallback">;
  readonly heartbeatTimeoutMs?: number;
}

/** How a result that should wake the session reaches the agent, when the service says so. */
export async function willWake(
  inbox: ExecInboxClient,
  sessionId: string,
): Promise<boolean | undefined> {
  return viewWillWake(await retrying(() => inbox.getSession(sessionId)));
}

/** Whether a session view says a result will wake its agent; undefined when it does not say. */
export function viewWillWake(view: unknown): boolean | undefined {
  const wake = (view as { wake?: unknown }).wake as { via?: unknown } | null | undefined;
  if (wake === undefined || wake === null || !("via" in wake)) return undefined;
  return wake.via !== null;
}

/** The host's log line for a wait nothing will resume (the model was told so too). */
export const unwokenWaitLine = (handles: readonly string[]): string =>
  `nothing will resume the wait on ${handles.join(", ")}: the session has no wake path (no resume URL, binding or default webhook), so the host must resume it`;

export const unknown = (note: string, handle?: string) => ({
  outcome: RECOVERED_UNKNOWN_OUTCOME,
  ...(handle === undefined ? {} : { session_id: handle }),
  status: "unknown",
  note,
});

function stillRunning(job: JobView, wake: boolean | undefined, budget: number, lead: string) {
  const tail = capText(job.progress?.output_tail ?? "", budget);
  const reported = job.progress === null ? "" : ` ${recoveredTailNote(job.progress.at)}`;
  return {
    session_id: job.handle,
    status: "running",
    output: tail.text,
    output_truncated: true,
    ...(job.progress?.output_bytes_total == null
      ? {}
      : { output_bytes_total: job.progress.output_bytes_total }),
    ...(wake === undefined ? {} : { will_wake: wake }),
    // A service that does not say whether a wake will come gets none promised.
    note: `${lead}${reported} ${backgroundNote(job.handle, wake === true)}`,
  };
}

function finished(job: JobView, budget: number, lead: string) {
  const output = capText(job.output ?? "", budget);
  const cut = job.output_truncated || output.truncated;
  return {
    // First, as in every answer for a finished command: how it ended, never misread.
    outcome: jobOutcomeLine(job, output.truncated),
    session_id: job.handle,
    status: job.status,
    exit_code: shownExitCode(job.status, job.exit_code),
    output: output.text,
    output_truncated: cut,
    ...(cut && job.output_bytes_total_known !== false
      ? { output_bytes_total: job.output_bytes_total }
      : {}),
    note: [lead, RECOVERED_STORED, ...(job.status === "lost" ? [lostNote(job.ended_by)] : [])].join(
      " ",
    ),
  };
}

/** The job of `handle`; null when exec-inbox never took it, "expired" when its record was purged. */
async function jobOf(
  inbox: ExecInboxClient,
  sessionId: string,
  handle: string,
): Promise<JobView | null | "expired"> {
  try {
    return await retrying(() => inbox.getJob(sessionId, handle));
  } catch (error) {
    if (error instanceof ExecInboxError && error.problem.code === "job_expired") return "expired";
    if (error instanceof ExecInboxError && error.problem.status === 404) return null;
    throw error;
  }
}

/**
 * A handle the runner gave and exec-inbox never reserved (the host stopped in between): reserved
 * and armed now, as exec_command does (both idempotent; the runner holds a completion until
 * armed). Null when it cannot be: nobody will report the command's end.
 */
async function reserveLate(
  inbox: ExecInboxClient,
  sessionId: string,
  call: JournaledCall,
  handle: string,
  options: RecoveryOptions,
): Promise<{ job: JobView; willWake: boolean } | null> {
  const runner = options.runner;
  if (runner === undefined) return null;
  try {
    const reservation = await retrying(() =>
      inbox.reserveJob(sessionId, {
        handle,
        command: String(call.input.cmd ?? ""),
        ...(options.heartbeatTimeoutMs === undefined
          ? {}
          : { heartbeat_timeout_ms: options.heartbeatTimeoutMs }),
      }),
    );
    await retrying(() => runner.armCallback(handle, reservation.callback));
    return { job: reservation.job, willWake: reservation.will_wake === true };
  } catch {
    return null;
  }
}

/** The truth of a job by its handle, led by `lead`; null when exec-inbox has no job of it. */
export async function jobTruth(
  inbox: ExecInboxClient,
  sessionId: string,
  handle: string,
  budget: number,
  lead: string,
  wake: () => Promise<boolean | undefined>,
): Promise<{ result: Record<string, unknown>; running: string | null } | null> {
  const job = await jobOf(inbox, sessionId, handle);
  if (job === null) return null;
  if (job === "expired")
    return { result: unknown(recoveredUnknownNote("expired"), handle), running: null };
  if (job.status === "running") {
    return { result: stillRunning(job, await wake(), budget, lead), running: job.handle };
  }
  return { result: finished(job, budget, lead), running: null };
}

/** A runner's answer as the tool gave it, led by its outcome when the command ended. */
function answered(answer: ExecAnswer & { note?: unknown }, lead: string) {
  const note = [lead, ...(typeof answer.note === "string" ? [answer.note] : [])].join(" ");
  return answer.exit_code === undefined ? { ...answer, note } : { ...withOutcome(answer), note };
}

/**
 * Each journaled call's result from exec-inbox: still running (handle, last progress, and
 * `will_wake` when the service tells it), finished (the stored result, or the answer the runner
 * gave), or unknown. Nothing is started again; a handle exec-inbox never took is reserved and
 * armed as exec_command would have (with `options.runner`), else its outcome is unknown.
 */
export async function recoverToolCalls(
  inbox: ExecInboxClient,
  sessionId: string,
  calls: readonly JournaledCall[],
  options: RecoveryOptions = {},
): Promise<RecoveredToolCall[]> {
  let wake: Promise<boolean | undefined> | undefined;
  const wakeOnce = () => {
    wake ??= willWake(inbox, sessionId);
    return wake;
  };
  const recovered: RecoveredToolCall[] = [];
  for (const call of calls) {
    const toolName = call.toolName ?? "exec_command";
    const base = { toolCallId: call.toolCallId, toolName, input: call.input };
    const budget = outputBudget(call.input.max_output_tokens as number | undefined);
    const answer = call.answer !== null && typeof call.answer === "object" ? call.answer : null;
    if (toolName === "write_stdin") {
      const result =
        answer === null
          ? { status: "unknown", note: RECOVERED_INPUT_MAYBE_SENT }
          : answered(answer as ExecAnswer, RECOVERED_FROM_JOURNAL);
      recovered.push({ ...base, running: null, result });
      continue;
    }
    if (answer !== null) {
      // Ended within its yield; or handed, and exec-inbox could not take it (the tool's answer).
      const lead = call.handle === null ? RECOVERED_ANSWERED : RECOVERED_FROM_JOURNAL;
      recovered.push({ ...base, running: null, result: answered(answer as ExecAnswer, lead) });
      continue;
    }
    if (call.handle === null) {
      const result = unknown(recoveredUnknownNote("unasked"));
      recovered.push({ ...base, running: null, result });
      continue;
    }
    const truth = await jobTruth(
      inbox,
      sessionId,
      call.handle,
      budget,
      RECOVERED_NOT_AGAIN,
      wakeOnce,
    );
    if (truth !== null) {
      recovered.push({ ...base, ...truth });
      continue;
    }
    const late = await reserveLate(inbox, sessionId, call, call.handle, options);
    recovered.push({
      ...base,
      ...(late === null
        ? {
            running: null,
            result: unknown(recoveredUnknownNote("untaken", call.handle), call.handle),
          }
        : late.job.status === "running"
          ? {
              running: late.job.handle,
              result: stillRunning(late.job, late.willWake, budget, RECOVERED_NOT_AGAIN),
            }
          : { running: null, result: finished(late.job, budget, RECOVERED_NOT_AGAIN) }),
    });
  }
  return recovered;
}
