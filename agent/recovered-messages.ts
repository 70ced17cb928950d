// Recovered calls (recover-tool-calls.ts) as the AI SDK's messages, for the engines and the stores
// that put them into a conversation. Where in the conversation they go is the caller's.
import type { ModelMessage } from "ai";
import type { RecoveredToolCall } from "./recover-tool-calls";

/** Recovered calls as the AI SDK's messages: one assistant message with the calls, one with results. */
export function aiSdkRecoveredMessages(recovered: readonly RecoveredToolCall[]): ModelMessage[] {
  if (recovered.length === 0) return [];
  return [
    {
      role: "assistant",
      content: recovered.map((call) => ({
        type: "tool-call" as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: call.input,
      })),
    },
    {
      role: "tool",
      content: recovered.map((call) => ({
        type: "tool-result" as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: "json" as const, value: call.result as never },
      })),
    },
  ];
}
