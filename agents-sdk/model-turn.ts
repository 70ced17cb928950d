// The Agents SDK agent's model turn (the AI SDK's generateText with the exec tools, every
// journaled call folded in first and each new one journaled) and its end (suspend or finish).
// Claims, storing and acking are the turn loop's (exec-inbox-agent.ts).
import { execTools, trackingContext } from "@exec-inbox/ai-sdk/exec-tools";
import { unwokenWaitLine, viewWillWake } from "@exec-inbox/ai-sdk/recover-tool-calls";
import { retrying } from "@exec-inbox/ai-sdk/retry";
import { type JournalWrite, journalEntry } from "@exec-inbox/ai-sdk/tool-call-journal";
import { DEFAULT_SYSTEM } from "@exec-inbox/ai-sdk/turn-engine";
import type { ExecInboxClient } from "@exec-inbox/client";
import { generateText, stepCountIs } from "ai";
import type { Conversation, ConversationState } from "./conversation";
import { foldJournal } from "./recovery";
import { conflict, type ExecInboxSettings, MAX_WAIT_HANDLES } from "./settings";

/** What a turn needs of its agent. */
export interface TurnContext {
  readonly conversation: Conversation;
  readonly sessionId: string;
  log(line: string): void;
}

/** The AI SDK retries retryable API errors itself; this also covers the rest. */
export async function modelTurnWithRetries(
  agent: TurnContext,
  settings: ExecInboxSettings,
  state: ConversationState,
  started: Set<string>,
) {
  const attempts = settings.modelAttempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await modelTurn(agent, settings, state, started);
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** (attempt - 1)));
    }
  }
}

async function modelTurn(
  agent: TurnContext,
  settings: ExecInboxSettings,
  state: ConversationState,
  started: Set<string>,
) {
  const { conversation, sessionId } = agent;
  // Calls of an attempt that never stored its turn (a restart, a provider that failed midway).
  const folded = await foldJournal(conversation, settings, sessionId);
  if (folded.length > 0) agent.log(`recovered ${folded.length} tool calls without a result`);
  for (const call of folded) if (call.running !== null) started.add(call.running);
  const running = new Set([...state.running, ...started]);
  let journal = conversation.journal();
  const write = (toolCallId: string, change: JournalWrite) => {
    const before = journal.length;
    journal = journalEntry(journal, toolCallId, change);
    const call = journal.findLast((entry) => entry.toolCallId === toolCallId);
    if (call !== undefined && journal.length > before) conversation.journalAdd(call);
    else if (call !== undefined) conversation.journalUpdate(call);
    return Promise.resolve();
  };
  const result = await generateText({
    model: settings.model,
    instructions: settings.system ?? DEFAULT_SYSTEM,
    messages: conversation.messages(),
    tools: execTools({
      ...trackingContext({ ...settings, sessionId }, running, started),
      journal: {
        begin: (toolCallId, input, toolName = "exec_command") =>
          write(toolCallId, { kind: "begin", toolName, input }),
        handed: (toolCallId, handle) => write(toolCallId, { kind: "handed", handle }),
        answered: (toolCallId, answer) => write(toolCallId, { kind: "answered", answer }),
      },
    }),
    stopWhen: stepCountIs(settings.maxSteps ?? 8),
  });
  return { messages: result.responseMessages, running: [...running], text: result.text };
}

/** Commands still running: wait for them (a wait that already covers them stays); else finish. */
export async function endTurn(
  agent: TurnContext,
  inbox: ExecInboxClient,
  state: ConversationState,
  runId: string,
): Promise<void> {
  const ended = async (call: () => Promise<unknown>) => {
    try {
      await retrying(call);
    } catch (error) {
      // Ended already (before a restart): the run is no longer active.
      if (!conflict(error, "invalid_transition")) throw error;
    }
  };
  if (state.running.length > 0) {
    // At most 64 handles a wait: `all` of the first 64 wakes the agent, which waits on the rest.
    const waitFor = state.running.slice(0, MAX_WAIT_HANDLES);
    const view = await retrying(() => inbox.getSession(agent.sessionId));
    const armed = view.waiting_for_bash;
    const same =
      armed !== null &&
      armed.handles.length === waitFor.length &&
      waitFor.every((handle) => armed.handles.includes(handle));
    if (!same) {
      await ended(() =>
        inbox.suspend(agent.sessionId, runId, { waiting_for: [...waitFor], wake: "all" }),
      );
      agent.log(`suspended on ${waitFor.join(", ")}`);
      // will_wake was false: the model was told to check with write_stdin; the host should know.
      if (viewWillWake(view) === false) agent.log(unwokenWaitLine(waitFor));
      return;
    }
  }
  await ended(() => inbox.finishRun(agent.sessionId, runId));
  agent.log(`run ${runId} finished`);
}
