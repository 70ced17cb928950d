// The Agents SDK agent's recovery without re-running: journaled calls of a turn that was never
// stored, and calls a compaction left without a result, get exec-inbox's truth in the agent's
// SQLite. The agent runs these one at a time with its turns (exec-inbox-agent.ts).
import { aiSdkToolCallFormat } from "@exec-inbox/ai-sdk/open-tool-calls";
import { handlesById, recoverOpenCalls } from "@exec-inbox/ai-sdk/recover-open-calls";
import { type RecoveredToolCall, recoverToolCalls } from "@exec-inbox/ai-sdk/recover-tool-calls";
import { aiSdkRecoveredMessages } from "@exec-inbox/ai-sdk/recovered-messages";
import type { RunnerClient } from "@exec-inbox/ai-sdk/runner-client";
import type { ExecInboxClient } from "@exec-inbox/client";
import type { Conversation } from "./conversation";

/** What recovery asks: exec-inbox, and the runner to arm a handle exec-inbox never took. */
export interface RecoverySettings {
  readonly inbox: ExecInboxClient;
  readonly runner: RunnerClient;
  readonly heartbeatTimeoutMs?: number;
}

const stillRunning = (recovered: readonly RecoveredToolCall[]): string[] =>
  recovered.flatMap((call) => (call.running === null ? [] : [call.running]));

/**
 * The journaled calls go into the conversation with exec-inbox's result for each, in one
 * transaction with emptying the journal: the model reads them, nothing reruns. The caller runs
 * this where no turn writes the journal meanwhile.
 */
export async function foldJournal(
  conversation: Conversation,
  settings: RecoverySettings,
  sessionId: string,
): Promise<RecoveredToolCall[]> {
  const journal = conversation.journal();
  if (journal.length === 0) return [];
  const recovered = await recoverToolCalls(settings.inbox, sessionId, journal, settings);
  // Read again after the awaits: a prompt or a wake may have changed the state meanwhile.
  const state = conversation.state();
  conversation.commit({
    state: {
      ...state,
      running: [...new Set([...state.running, ...stillRunning(recovered)])],
      turnOwed: true,
    },
    messages: aiSdkRecoveredMessages(recovered),
    journalDone: true,
  });
  return recovered;
}

/**
 * Every call the stored conversation holds without a result gets one right after it. The
 * conversation is read again after exec-inbox answered, and only calls still open there are
 * closed: messages stored meanwhile (a prompt, a wake) stay. Returns how many calls got a result.
 */
export async function recoverStoredCalls(
  conversation: Conversation,
  settings: RecoverySettings,
  sessionId: string,
): Promise<number> {
  const journaled = await foldJournal(conversation, settings, sessionId);
  const open = aiSdkToolCallFormat.openCalls(conversation.messages());
  if (open.length === 0) return journaled.length;
  const handles = handlesById(conversation.callHandles());
  const recovered = await recoverOpenCalls(settings.inbox, sessionId, open, handles);
  // No await from here to the commit: what is read is what is replaced.
  const messages = conversation.messages();
  const stillOpen = new Set(aiSdkToolCallFormat.openCalls(messages).map((call) => call.toolCallId));
  const closing = recovered.filter((call) => stillOpen.has(call.toolCallId));
  const state = conversation.state();
  conversation.commit({
    state: {
      ...state,
      running: [...new Set([...state.running, ...stillRunning(closing)])],
      turnOwed: true,
    },
    messages: aiSdkToolCallFormat.close(messages, closing),
    replace: true,
  });
  return journaled.length + closing.length;
}
