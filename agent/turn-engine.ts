// One model turn, in the agent framework of the host's choice. The kit owns everything around it
// (the resume, the claims, which envelopes are new, the store, the ack, the turn boundary); an
// engine only turns the stored conversation and what is new into the next conversation.

import type { Claim } from "@exec-inbox/client";
import { generateText, type LanguageModel, type ModelMessage, stepCountIs } from "ai";
import { type ExecToolContext, execTools } from "./exec-tools";
import { aiSdkToolCallFormat, type ToolCallFormat } from "./open-tool-calls";
import type { RecoveredToolCall } from "./recover-tool-calls";
import { aiSdkRecoveredMessages } from "./recovered-messages";

export { aiSdkRecoveredMessages } from "./recovered-messages";

export const DEFAULT_SYSTEM =
  "You operate a shell through exec_command and write_stdin. Long commands continue in the background; the note beside one says whether a runtime message will tell you when it ends. Read a background command's result with write_stdin, and check with it yourself when no message is promised.";

export interface TurnInput<M> {
  readonly sessionId: string;
  /** The conversation as the engine last returned it (empty for a new session). */
  readonly messages: readonly M[];
  /** A human message, or null on a wake. */
  readonly userText: string | null;
  /** Inbox items the conversation does not hold yet, oldest first: each is put in once, here. */
  readonly claims: readonly Claim[];
  /** What the exec tools need; the kit learns through its callbacks which commands still run. */
  readonly tools: ExecToolContext;
  /**
   * exec_command calls an earlier attempt of this turn made (a host that crashed, a provider that
   * failed midway), each with the result exec-inbox gives it: the engine puts each call and its
   * result after the claims, so the model reads them and never makes them again.
   */
  readonly recovered: readonly RecoveredToolCall[];
}

export interface TurnOutput<M> {
  /** The whole conversation after the turn (stored by the kit before it acks). */
  readonly messages: M[];
  /** The model's last answer in words. */
  readonly text: string;
}

/**
 * One model turn. `toolCallFormat` says how the engine's messages show a tool call and its
 * result: `kit.recoverToolCalls` needs it to give a compacted conversation's open calls a result.
 */
export type TurnEngine<M> = ((input: TurnInput<M>) => Promise<TurnOutput<M>>) & {
  readonly toolCallFormat?: ToolCallFormat<M>;
};

/** What a runtime message is called in a conversation: a UI tells it from human text. */
export function runtimeMarker(claim: Claim) {
  const { id, metadata } = claim.provider_message;
  return { id, hidden_from_ui: metadata.hidden_from_ui, runtime_kind: metadata.runtime_kind };
}

export interface AiSdkTurnOptions {
  /** The model of one session's agent. */
  readonly model: (sessionId: string) => LanguageModel;
  readonly system?: string;
  readonly maxSteps?: number;
}

/** The Vercel AI SDK's turn: `generateText` with the exec tools, up to `maxSteps` steps. */
export function aiSdkTurn(options: AiSdkTurnOptions): TurnEngine<ModelMessage> {
  return Object.assign(aiSdkTurnOf(options), { toolCallFormat: aiSdkToolCallFormat });
}

function aiSdkTurnOf(
  options: AiSdkTurnOptions,
): (input: TurnInput<ModelMessage>) => Promise<TurnOutput<ModelMessage>> {
  return async ({ sessionId, messages, userText, claims, tools, recovered }) => {
    const prompt: ModelMessage[] = [...messages];
    if (userText !== null) prompt.push({ role: "user", content: userText });
    for (const claim of claims) {
      // Kept with the message (providers ignore other providers' options).
      prompt.push({
        role: "user",
        content: claim.provider_message.content,
        providerOptions: { execInbox: runtimeMarker(claim) },
      });
    }
    prompt.push(...aiSdkRecoveredMessages(recovered));
    const result = await generateText({
      model: options.model(sessionId),
      instructions: options.system ?? DEFAULT_SYSTEM,
      messages: prompt,
      tools: execTools(tools),
      stopWhen: stepCountIs(options.maxSteps ?? 8),
    });
    return { messages: [...prompt, ...result.responseMessages], text: result.text };
  };
}
