// Recovery without re-running: the journal a kit keeps of its exec_command calls (written before
// the runner is asked), and the result each journaled call gets from exec-inbox's truth when the
// turn that made it was never stored. Where the journal lives, and how a result enters the
// conversation, is the kit's.
import { type ExecInboxClient, ExecInboxError, type JobView } from "@exec-inbox/client";
import { capText, outputBudget } from "../shared/output-budget";
import {
  backgroundNote,
  jobOutcomeLine,
  RECOVERED_NOT_AGAIN,
  RECOVERED_STORED,
  recoveredTailNote,
  recoveredUnknownNote,
  shownExitCode,
} from "./model-texts";
import { retrying } from "./retry";

/** One exec_command call as the kit journaled it (persisted as JSON: evolve by adding fields). */
export interface JournaledCall {
  /** The model's id for the call: the id its result is given under. */
  readonly toolCallId: string;
  readonly toolName: "exec_command";
  /** The input as the tool took it (cmd, workdir, yield_time_ms, max_output_tokens). */
  readonly input: Readonly<Record<string, unknown>>;
  /** The runner's handle once it answered with one (the command went on in the background). */
  readonly handle: string | null;
  /** The answer the tool gave when the command ended within its yield; null otherwise. */
  readonly answer: unknown;
}

/** What the exec tool writes, and awaits, before each step of a call that cannot be taken back. */
export interface ToolCallJournal {
  /** Before the runner is asked: from here on the command may have started. */
  begin(toolCallId: string, input: Readonly<Record<string, unknown>>): Promise<void>;
  /** The runner answered with a handle: exec-inbox's job of that handle is the call's truth. */
  handed(toolCallId: string, handle: string): Promise<void>;
  /** The command ended within its yield: this answer is its result (exec-inbox has no job). */
  answered(toolCallId: string, answer: unknown): Promise<void>;
}

/** A journaled call with the result recovery gives it; `running` is its handle while it runs. */
export interface RecoveredToolCall {
  readonly toolCallId: string;
  readonly toolName: "exec_command";
  readonly input: Readonly<Record<string, unknown>>;
  readonly result: Readonly<Record<string, unknown>>;
  readonly running: string | null;
}

/** A journal entry's next form after one of the three writes. */
export function journalEntry(
  journal: readonly JournaledCall[],
  toolCallId: string,
  change: Partial<Pick<JournaledCall, "handle" | "answer" | "input">>,
): JournaledCall[] {
  const known = journal.some((call) => call.toolCallId === toolCallId);
  if (!known) {
    const call: JournaledCall = {
      toolCallId,
      toolName: "exec_command",
      input: change.input ?? {},
      handle: change.handle ?? null,
      answer: change.answer ?? null,
    };
    return [...journal, call];
  }
  return journal.map((call) => (call.toolCallId === toolCallId ? { ...call, ...change } : call));
}

/** A journal whose entries can be read back: the calls made so far, recovered ones included. */
export type PersistedJournal = ToolCallJournal & { entries(): readonly JournaledCall[] };

/** A journal held in memory whose every write is handed to `persist` (awaited) before it returns. */
export function persistedJournal(
  initial: readonly JournaledCall[],
  persist: (journal: readonly JournaledCall[]) => Promise<void>,
): PersistedJournal {
  let journal = [...initial];
  const write = async (toolCallId: string, change: Parameters<typeof journalEntry>[2]) => {
    journal = journalEntry(journal, toolCallId, change);
    await persist(journal);
  };
  return {
    entries: () => journal,
    begin: (toolCallId, input) => write(toolCallId, { input }),
    handed: (toolCallId, handle) => write(toolCallId, { handle }),
    answered: (toolCallId, answer) => write(toolCallId, { answer }),
  };
}

/** How a result that should wake the session reaches the agent, when the service says so. */
async function willWake(inbox: ExecInboxClient, sessionId: string): Promise<boolean | undefined> {
  const view = (await retrying(() => inbox.getSession(sessionId))) as { wake?: unknown };
  const wake = view.wake as { via?: unknown } | null | undefined;
  if (wake === undefined || wake === null || !("via" in wake)) return undefined;
  return wake.via !== null;
}

function stillRunning(job: JobView, wake: boolean | undefined, budget: number) {
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
    note: `${RECOVERED_NOT_AGAIN}${reported} ${backgroundNote(job.handle, wake === true)}`,
  };
}

function finished(job: JobView, budget: number) {
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
    note: `${RECOVERED_NOT_AGAIN} ${RECOVERED_STORED}`,
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
    if (error instanceof ExecInboxError && error.problem.status === 404) return null;
    if (error instanceof ExecInboxError && error.problem.code === "job_expired") return "expired";
    throw error;
  }
}

/**
 * Each journaled call's result from exec-inbox: still running (handle, last progress, and
 * `will_wake` when the service tells it), finished (the stored result, or the answer the runner
 * gave within the yield), or unknown. Reads only: nothing is started, reserved or killed.
 */
export async function recoverToolCalls(
  inbox: ExecInboxClient,
  sessionId: string,
  calls: readonly JournaledCall[],
): Promise<RecoveredToolCall[]> {
  if (calls.length === 0) return [];
  let wake: Promise<boolean | undefined> | undefined;
  const recovered: RecoveredToolCall[] = [];
  for (const call of calls) {
    const budget = outputBudget(call.input.max_output_tokens as number | undefined);
    const base = { toolCallId: call.toolCallId, toolName: call.toolName, input: call.input };
    if (call.handle === null) {
      const answer = call.answer as Record<string, unknown> | null;
      recovered.push({
        ...base,
        running: null,
        result:
          answer !== null && typeof answer === "object"
            ? answer
            : {
                status: "unknown",
                note: recoveredUnknownNote("unasked"),
              },
      });
      continue;
    }
    const job = await jobOf(inbox, sessionId, call.handle);
    if (job === "expired") {
      recovered.push({
        ...base,
        running: null,
        result: {
          session_id: call.handle,
          status: "unknown",
          note: recoveredUnknownNote("expired"),
        },
      });
      continue;
    }
    if (job === null) {
      recovered.push({
        ...base,
        running: null,
        result: {
          session_id: call.handle,
          status: "unknown",
          note: recoveredUnknownNote("untaken", call.handle),
        },
      });
      continue;
    }
    if (job.status === "running") {
      wake ??= willWake(inbox, sessionId);
      recovered.push({
        ...base,
        running: job.handle,
        result: stillRunning(job, await wake, budget),
      });
      continue;
    }
    recovered.push({ ...base, running: null, result: finished(job, budget) });
  }
  return recovered;
}

/**
 * Results for calls a stored conversation holds without one (a compaction dropped them): a call
 * whose handle the kit kept gets its job's truth; any other, that no record of its command is kept.
 */
export async function recoverOpenCalls(
  inbox: ExecInboxClient,
  sessionId: string,
  open: ReadonlyArray<{ toolCallId: string; input: Readonly<Record<string, unknown>> }>,
  handles: ReadonlyMap<string, string>,
): Promise<RecoveredToolCall[]> {
  const known = open.flatMap((call): JournaledCall[] => {
    const handle = handles.get(call.toolCallId);
    return handle === undefined
      ? []
      : [{ ...call, toolName: "exec_command", handle, answer: null }];
  });
  const byId = new Map(
    (await recoverToolCalls(inbox, sessionId, known)).map((call) => [call.toolCallId, call]),
  );
  return open.map(
    (call) =>
      byId.get(call.toolCallId) ?? {
        ...call,
        toolName: "exec_command",
        running: null,
        result: {
          status: "unknown",
          note: recoveredUnknownNote("dropped"),
        },
      },
  );
}
