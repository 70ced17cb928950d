// Tool calls a stored OpenAI Agents JS history holds without a result (a compaction dropped them):
// finding them, putting a result right after each, and writing journaled calls as items. The AI
// SDK form is agent/open-tool-calls.ts.
import type { RecoveredToolCall, ToolCallFormat } from "@exec-inbox/ai-sdk";
import type { AgentInputItem } from "@openai/agents";

const inputOf = (text: string): Readonly<Record<string, unknown>> => {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null) return value as Record<string, unknown>;
  } catch {}
  return { cmd: text };
};

/** A recovered call's result as the SDK's item: its JSON as text, as the function tools answer. */
export const resultItem = (call: RecoveredToolCall): AgentInputItem => ({
  type: "function_call_result",
  callId: call.toolCallId,
  name: call.toolName,
  status: "completed",
  output: { type: "text", text: JSON.stringify(call.result) },
});

export const openAiToolCallFormat: ToolCallFormat<AgentInputItem> = {
  openCalls(items) {
    const answered = new Set(
      items.flatMap((item) => (item.type === "function_call_result" ? [item.callId] : [])),
    );
    return items.flatMap((item) =>
      item.type === "function_call" && !answered.has(item.callId)
        ? [{ toolCallId: item.callId, toolName: item.name, input: inputOf(item.arguments) }]
        : [],
    );
  },
  close(items, recovered) {
    const byId = new Map(recovered.map((call) => [call.toolCallId, call]));
    return items.flatMap((item) => {
      const call = item.type === "function_call" ? byId.get(item.callId) : undefined;
      return call === undefined ? [item] : [item, resultItem(call)];
    });
  },
  recoveredMessages: (recovered) => openAiRecoveredItems(recovered),
  toolCallIds: (items) =>
    items.flatMap((item) => (item.type === "function_call" ? [item.callId] : [])),
};

/** Recovered calls as the SDK's items: each function call, then its result as JSON text. */
export function openAiRecoveredItems(recovered: readonly RecoveredToolCall[]): AgentInputItem[] {
  return recovered.flatMap((call): AgentInputItem[] => [
    {
      type: "function_call",
      callId: call.toolCallId,
      name: call.toolName,
      arguments: JSON.stringify(call.input),
      status: "completed",
    },
    resultItem(call),
  ]);
}
