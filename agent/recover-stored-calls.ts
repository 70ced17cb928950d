// The AI SDK kit's recovery of a stored session: journaled calls of a turn that was never stored
// (with no run left to take them) are appended with their results, and the calls a compaction left
// without a result get one right after each. The engine's `toolCallFormat` reads and writes its
// messages; the kit orders these after the session's work.
import type { ConversationStore } from "./conversation-store";
import type { KitRun } from "./kit-settings";
import { handlesById, recoverOpenCalls } from "./recover-open-calls";
import { type RecoveredToolCall, recoverToolCalls } from "./recover-tool-calls";
import type { SessionRecord } from "./session-record";
import { journaledHandles } from "./tool-call-journal";

/** Handles of stored calls kept for recovery after a compaction. */
export const KEEP_CALL_HANDLES = 1024;

const stillRunning = (recovered: readonly RecoveredToolCall[]): string[] =>
  recovered.flatMap((call) => (call.running === null ? [] : [call.running]));

/**
 * The journal's calls appended to the conversation with exec-inbox's result for each, and the
 * journal emptied, in one save: for a session whose run ended without storing its turn (its model
 * failed), so its next run's own messages come after them. An engine whose format cannot write
 * them leaves the journal to the next turn (`TurnInput.recovered`).
 */
export async function foldJournal<M>(
  options: KitRun<M>,
  store: ConversationStore<M>,
  sessionId: string,
): Promise<RecoveredToolCall[]> {
  const format = options.turn.toolCallFormat;
  const record = await store.load(sessionId);
  const journal = record?.toolCalls ?? [];
  if (record === undefined || journal.length === 0 || format?.recoveredMessages === undefined) {
    return [];
  }
  const recovered = await recoverToolCalls(options.inbox, sessionId, journal, options);
  await store.save({
    ...record,
    messages: [...record.messages, ...format.recoveredMessages(recovered)],
    running: [...new Set([...record.running, ...stillRunning(recovered)])],
    toolCalls: [],
    callHandles: [...(record.callHandles ?? []), ...journaledHandles(journal)].slice(
      -KEEP_CALL_HANDLES,
    ),
  });
  return recovered;
}

/**
 * `kit.recoverToolCalls`: with no run under way, the journal folded (above); then every call the
 * stored conversation holds without a result gets one, stored right after it.
 */
export async function recoverStoredCalls<M>(
  options: KitRun<M>,
  store: ConversationStore<M>,
  sessionId: string,
): Promise<RecoveredToolCall[]> {
  const format = options.turn.toolCallFormat;
  if (format === undefined) {
    throw new TypeError("the kit's turn engine has no toolCallFormat: it cannot find open calls");
  }
  const first = await store.load(sessionId);
  if (first === undefined) throw new Error(`no session ${sessionId}`);
  // A run under way takes its journal itself (its next turn reads the calls).
  const folded = first.activeRun === null ? await foldJournal(options, store, sessionId) : [];
  const record: SessionRecord<M> | undefined = await store.load(sessionId);
  if (record === undefined) return folded;
  const open = format.openCalls(record.messages);
  if (open.length === 0) return folded;
  const handles = handlesById(record.callHandles ?? []);
  const recovered = await recoverOpenCalls(options.inbox, sessionId, open, handles);
  await store.save({
    ...record,
    messages: format.close(record.messages, recovered),
    // The next turn waits for what still runs, as it would have before the compaction.
    running: [...new Set([...record.running, ...stillRunning(recovered)])],
  });
  return [...folded, ...recovered];
}
