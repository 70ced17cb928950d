// Tool calls a stored conversation holds without a result (a host compacted it and dropped their
// results), in the AI SDK's messages: finding them, and putting a result right after each. Which
// result each gets is recover-open-calls.ts's; the OpenAI Agents JS form is openai-agents/'s.
import type { ModelMessage, ToolCallPart } from "ai";
import { type CallOrResult, openCallIndexes, ownResults } from "./open-positions";
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

/** Where a tool call or result sits: its message and its part in that message. */
interface Placed extends CallOrResult {
  readonly message: number;
  readonly part: number;
}

/** Every tool call and tool result of `messages`, in order, with where each sits. */
const placed = (messages: readonly ModelMessage[]): Placed[] =>
  messages.flatMap((message, index) =>
    (message.role === "assistant" || message.role === "tool") && Array.isArray(message.content)
      ? message.content.flatMap((part, partIndex): Placed[] =>
          part.type === "tool-call" || part.type === "tool-result"
            ? [
                {
                  kind: part.type === "tool-call" ? "call" : "result",
                  id: part.toolCallId,
                  message: index,
                  part: partIndex,
                },
              ]
            : [],
        )
      : [],
  );

/** The tool calls no result answers, by where they sit, oldest first. */
function openPlaces(messages: readonly ModelMessage[]): Placed[] {
  const entries = placed(messages);
  return openCallIndexes(entries).flatMap((index) => {
    const entry = entries[index];
    return entry === undefined ? [] : [entry];
  });
}

/** The tool-call part at a place (it is one: openPlaces found it). */
const callAt = (messages: readonly ModelMessage[], place: Placed): ToolCallPart | undefined => {
  const message = messages[place.message];
  if (message?.role !== "assistant" || !Array.isArray(message.content)) return undefined;
  const part = message.content[place.part];
  return part?.type === "tool-call" ? part : undefined;
};

export const aiSdkToolCallFormat: ToolCallFormat<ModelMessage> = {
  openCalls(messages) {
    return openPlaces(messages).flatMap((place) => {
      const part = callAt(messages, place);
      return part === undefined
        ? []
        : [{ toolCallId: part.toolCallId, toolName: part.toolName, input: inputOf(part.input) }];
    });
  },
  close(messages, recovered) {
    // Each result goes after its own call, found by position: one id may name several calls.
    const places = openPlaces(messages);
    const results = ownResults(
      places.map((place) => place.id),
      recovered,
    );
    const byMessage = new Map<number, RecoveredToolCall[]>();
    places.forEach((place, index) => {
      const call = results[index];
      if (call !== undefined)
        byMessage.set(place.message, [...(byMessage.get(place.message) ?? []), call]);
    });
    return messages.flatMap((message, index): ModelMessage[] => {
      const mine = byMessage.get(index);
      if (mine === undefined) return [message];
      // Providers want a call's result right after the message that made it.
      const answers: ModelMessage = {
        role: "tool",
        content: mine.map((call) => ({
          type: "tool-result" as const,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: { type: "json" as const, value: call.result as never },
        })),
      };
      return [message, answers];
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
