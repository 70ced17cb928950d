// Tool calls a stored OpenAI Agents JS history holds without a result (a compaction dropped them):
// finding them, putting a result right after each, and writing journaled calls as items. The AI
// SDK form is agent/open-tool-calls.ts.
import type { RecoveredToolCall, ToolCallFormat } from "@exec-inbox/ai-sdk";
import { openCallIndexes, ownResults } from "@exec-inbox/ai-sdk/open-positions";
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

/** The function calls no result answers, by their index in `items`, oldest first. */
function openIndexes(items: readonly AgentInputItem[]): number[] {
  // One callId may name several calls (a provider numbering them per turn): match by position.
  const entries = items.flatMap((item, index) =>
    item.type === "function_call" || item.type === "function_call_result"
      ? [
          {
            kind: item.type === "function_call" ? "call" : "result",
            id: item.callId,
            index,
          } as const,
        ]
      : [],
  );
  return openCallIndexes(entries).flatMap((n) => {
    const entry = entries[n];
    return entry === undefined ? [] : [entry.index];
  });
}

export const openAiToolCallFormat: ToolCallFormat<AgentInputItem> = {
  openCalls(items) {
    return openIndexes(items).flatMap((index) => {
      const item = items[index];
      return item?.type === "function_call"
        ? [{ toolCallId: item.callId, toolName: item.name, input: inputOf(item.arguments) }]
        : [];
    });
  },
  close(items, recovered) {
    // Each result goes after its own call, found by position: one callId may name several calls.
    const open = openIndexes(items);
    const results = ownResults(
      open.map((index) => {
        const item = items[index];
        return item?.type === "function_call" ? item.callId : "";
      }),
      recovered,
    );
    const byIndex = new Map(open.map((index, n) => [index, results[n]]));
    return items.flatMap((item, index) => {
      const call = byIndex.get(index);
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
