// Results for the tool calls a stored conversation holds without one (a compaction dropped them):
// each tool's truth from exec-inbox, or what can be said without it. Finding the open calls and
// storing their results is the kit's (open-tool-calls.ts, recover-stored-calls.ts).
import type { ExecInboxClient } from "@exec-inbox/client";
import { outputBudget } from "../shared/output-budget";
import {
  RECOVERED_INPUT_MAYBE_SENT,
  RECOVERED_OTHER_DROPPED,
  RECOVERED_READ_DROPPED,
  RECOVERED_WRITE_STDIN,
  recoveredUnknownNote,
} from "./model-texts";
import {
  jobTruth,
  type RecoveredToolCall,
  recoverToolCalls,
  unknown,
  willWake,
} from "./recover-tool-calls";

/** A tool call a conversation holds without a result, by its id, tool and input. */
export interface OpenCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/** Every handle kept for each tool call id (two calls under one id keep two). */
export function handlesById(
  entries: ReadonlyArray<{ readonly toolCallId: string; readonly handle: string }>,
): Map<string, string[]> {
  const byId = new Map<string, string[]>();
  for (const { toolCallId, handle } of entries) {
    const known = byId.get(toolCallId) ?? [];
    if (!known.includes(handle)) byId.set(toolCallId, [...known, handle]);
  }
  return byId;
}

/**
 * Results for every call a stored conversation holds without one (a compaction dropped them):
 * an exec_command whose one handle the kit kept gets its job's truth (an id kept with several
 * handles is unknown, never one of them); a write_stdin, its job's truth now; a read of output,
 * a note to ask again; any other tool, that what it did is unknown here.
 */
export async function recoverOpenCalls(
  inbox: ExecInboxClient,
  sessionId: string,
  open: readonly OpenCall[],
  handles: ReadonlyMap<string, readonly string[]>,
): Promise<RecoveredToolCall[]> {
  let wake: Promise<boolean | undefined> | undefined;
  const wakeOnce = () => {
    wake ??= willWake(inbox, sessionId);
    return wake;
  };
  const recovered: RecoveredToolCall[] = [];
  for (const call of open) {
    const done = (result: Record<string, unknown>, running: string | null = null) =>
      recovered.push({ ...call, result, running });
    const budget = outputBudget(call.input.max_output_tokens as number | undefined);
    if (call.toolName === "exec_command") {
      const kept = handles.get(call.toolCallId) ?? [];
      if (kept.length !== 1) {
        done(unknown(recoveredUnknownNote(kept.length === 0 ? "dropped" : "ambiguous")));
        continue;
      }
      const journaled = {
        ...call,
        toolName: "exec_command" as const,
        handle: kept[0] ?? null,
        answer: null,
      };
      // No late reservation: a kept handle without a job is one the tool could not reserve, and
      // its answer (stopped, or unwatched) was in the turn it stored.
      const [one] = await recoverToolCalls(inbox, sessionId, [journaled]);
      if (one !== undefined) recovered.push(one);
      continue;
    }
    if (call.toolName === "write_stdin") {
      const handle = typeof call.input.session_id === "string" ? call.input.session_id : "";
      const sent = typeof call.input.chars === "string" && call.input.chars !== "";
      const lead = sent
        ? `${RECOVERED_WRITE_STDIN} ${RECOVERED_INPUT_MAYBE_SENT}`
        : RECOVERED_WRITE_STDIN;
      const truth =
        handle === "" ? null : await jobTruth(inbox, sessionId, handle, budget, lead, wakeOnce);
      if (truth === null) done({ status: "unknown", note: lead });
      else done(truth.result, truth.running);
      continue;
    }
    const reads = call.toolName === "read_output" || call.toolName === "grep_output";
    done({ status: "dropped", note: reads ? RECOVERED_READ_DROPPED : RECOVERED_OTHER_DROPPED });
  }
  return recovered;
}
