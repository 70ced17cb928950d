// What a demo's model read, text by text: each prompt message the model had not been given before,
// rendered as the model receives it (a tool's answer as its JSON). Printing is the demo's.
import type { AgentInputItem } from "@openai/agents";
import type { ModelMessage } from "ai";

/** Yields only what it has not yielded before: a conversation's prompt repeats its history. */
function unseen<T>(seen: Set<string>, items: readonly T[]): T[] {
  return items.filter((item) => {
    const key = JSON.stringify(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const partText = (part: unknown): string =>
  typeof part === "object" && part !== null && "text" in part ? String(part.text) : "";

/** One AI SDK prompt message as the model reads it; its own messages are left out. */
function aiSdkText(message: ModelMessage): string[] {
  switch (message.role) {
    case "system":
      return [`system: ${message.content}`];
    case "user":
      return [
        `user: ${typeof message.content === "string" ? message.content : message.content.map(partText).join("")}`,
      ];
    case "tool":
      return message.content.flatMap((part) =>
        part.type === "tool-result"
          ? [
              `${part.toolName} answered: ${JSON.stringify((part.output as { value: unknown }).value)}`,
            ]
          : [],
      );
    default:
      return [];
  }
}

/** The new texts of AI SDK prompts since the last call (`prompts`: every model call's prompt). */
export function aiSdkReads(): (prompts: readonly (readonly ModelMessage[])[]) => string[] {
  const seen = new Set<string>();
  return (prompts) => prompts.flatMap((prompt) => unseen(seen, prompt).flatMap(aiSdkText));
}

/** One OpenAI Agents input item as the model reads it; its own messages and calls are left out. */
function agentsText(item: AgentInputItem): string[] {
  if (item.type === "message" && "role" in item && item.role === "user") {
    const content = (item as { content: unknown }).content;
    return [
      `user: ${typeof content === "string" ? content : (content as unknown[]).map(partText).join("")}`,
    ];
  }
  if (item.type === "function_call_result") {
    const output = (item as { output: unknown }).output;
    const text = typeof output === "string" ? output : partText(output);
    return [`${(item as { name: string }).name} answered: ${text}`];
  }
  return [];
}

/** The new texts of OpenAI Agents inputs since the last call (`inputs`: every model call's input). */
export function agentsReads(
  instructions: string,
): (inputs: readonly (readonly AgentInputItem[])[]) => string[] {
  const seen = new Set<string>();
  let first = true;
  return (inputs) => {
    const texts = inputs.flatMap((input) => unseen(seen, input).flatMap(agentsText));
    if (first && inputs.length > 0) {
      first = false;
      return [`system: ${instructions}`, ...texts];
    }
    return texts;
  };
}

/** Prints, beside the timeline, each text the model read since the last step, exactly. */
export function printReads(texts: readonly string[]): void {
  for (const text of texts) {
    const [first = "", ...rest] = text.split("\n");
    console.log(`             │ model read: ${first}`);
    for (const line of rest) console.log(`             │             ${line}`);
  }
}
