// Tool calls a stored OpenAI Agents JS history holds without a result (a compaction dropped them):
// finding them, and putting a result right after each. The AI SDK form is agent/open-tool-calls.ts.
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
      item.type === "function_call" && item.name === "exec_command" && !answered.has(item.callId)
        ? [{ toolCallId: item.callId, input: inputOf(item.arguments) }]
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
};
