// The AI SDK kit's `recoverToolCalls`: a stored conversation's exec_command calls without a result
// (a compaction dropped it) get one from exec-inbox, stored right after each call. The engine's
// `toolCallFormat` reads and writes its messages; the kit orders the call after the session's work.
import type { ConversationStore } from "./conversation-store";
import { type RecoveredToolCall, recoverOpenCalls } from "./recover-tool-calls";
import type { KitRun } from "./run-turns";

export async function recoverStoredCalls<M>(
  options: KitRun<M>,
  store: ConversationStore<M>,
  sessionId: string,
): Promise<RecoveredToolCall[]> {
  const format = options.turn.toolCallFormat;
  if (format === undefined) {
    throw new TypeError("the kit's turn engine has no toolCallFormat: it cannot find open calls");
  }
  const record = await store.load(sessionId);
  if (record === undefined) throw new Error(`no session ${sessionId}`);
  const open = format.openCalls(record.messages);
  if (open.length === 0) return [];
  const handles = new Map(
    (record.callHandles ?? []).map((entry) => [entry.toolCallId, entry.handle] as const),
  );
  const recovered = await recoverOpenCalls(options.inbox, sessionId, open, handles);
  const stillRunning = recovered.flatMap((call) => (call.running === null ? [] : [call.running]));
  await store.save({
    ...record,
    messages: format.close(record.messages, recovered),
    // The next turn waits for what still runs, as it would have before the compaction.
    running: [...new Set([...record.running, ...stillRunning])],
  });
  return recovered;
}
