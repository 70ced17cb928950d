// Tool calls a stored conversation holds without a result (a host compacted it and dropped their
// results), in the AI SDK's messages: finding them, and putting a result right after each. Which
// result each gets is recover-open-calls.ts's; the OpenAI Agents JS form is openai-agents/'s.
import type { ModelMessage } from "ai";
import type { OpenCall } from "./recover-open-calls";
import type { RecoveredToolCall } from "./recover-tool-calls";
import { aiSdkRecoveredMessages } from "./recovered-messages";

/** A tool call the conversation holds without a result, by its id, tool and input. */
export type OpenToolCall = OpenCall;

/** How one framework's messages show tool calls and their results. */
export interface ToolCallFormat<M> {
  /** The tool calls in `messages` (of every tool) that no result answers, oldest first. */
  openCalls(messages: readonly M[]): OpenToolCall[];
  /** `messages` with each recovered result right after the call it answers. */
  close(messages: readonly M[], recovered: readonly RecoveredToolCall[]): M[];
  /** Journaled calls with their results as messages of their own, to append to a conversation. */
  recoveredMessages?(recovered: readonly RecoveredToolCall[]): M[];
  /** The id of every tool call in `messages`, answered or not. */
  toolCallIds?(messages: readonly M[]): string[];
}

const inputOf = (input: unknown): Readonly<Record<string, unknown>> => {
  if (typeof input === "string") {
    try {
      return inputOf(JSON.parse(input));
    } catch {
      return { cmd: input };
    }
  }
  return typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
};

export const aiSdkToolCallFormat: ToolCallFormat<ModelMessage> = {
  openCalls(messages) {
    const answered = new Set<string>();
    for (const message of messages) {
      if (message.role !== "tool") continue;
      for (const part of message.content) {
        if (part.type === "tool-result") answered.add(part.toolCallId);
      }
    }
    return messages.flatMap((message) =>
      message.role === "assistant" && Array.isArray(message.content)
        ? message.content.flatMap((part) =>
            part.type === "tool-call" && !answered.has(part.toolCallId)
              ? [
                  {
                    toolCallId: part.toolCallId,
                    toolName: part.toolName,
                    input: inputOf(part.input),
                  },
                ]
              : [],
          )
        : [],
    );
  },
  close(messages, recovered) {
    const byId = new Map(recovered.map((call) => [call.toolCallId, call]));
    return messages.flatMap((message): ModelMessage[] => {
      if (message.role !== "assistant" || !Array.isArray(message.content)) return [message];
      const mine = message.content.flatMap((part) => {
        const call = part.type === "tool-call" ? byId.get(part.toolCallId) : undefined;
        return call === undefined ? [] : [call];
      });
      if (mine.length === 0) return [message];
      // Providers want a call's result right after the message that made it.
      const results: ModelMessage = {
        role: "tool",
        content: mine.map((call) => ({
          type: "tool-result" as const,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: { type: "json" as const, value: call.result as never },
        })),
      };
      return [message, results];
    });
  },
  recoveredMessages: aiSdkRecoveredMessages,
  toolCallIds: (messages) =>
    messages.flatMap((message) =>
      message.role === "assistant" && Array.isArray(message.content)
        ? message.content.flatMap((part) => (part.type === "tool-call" ? [part.toolCallId] : []))
        : [],
    ),
};
