// A model for OpenAI Agents JS that needs no API key, scripted like the AI SDK kit's: a line
// `run: <command>` starts it, a runtime message makes it read the handle with write_stdin, tool
// results are answered in words. Tests read the inputs it was given.

import { describeResult, scriptedCalls } from "@exec-inbox/ai-sdk";
import type { AgentInputItem, Model, ModelRequest, ModelResponse } from "@openai/agents";
import { Usage } from "@openai/agents";

type Item = AgentInputItem;

/** The text of a message item (user or assistant); "" for other items. */
export function itemText(item: Item): string {
  if (!("role" in item) || item.type !== "message") return "";
  const { content } = item as { content: unknown };
  if (typeof content === "string") return content;
  return (content as Array<{ text?: string }>).map((part) => part.text ?? "").join("");
}

const isUserMessage = (item: Item): boolean =>
  item.type === "message" && "role" in item && item.role === "user";

/** The trailing user messages: what arrived since the model last spoke. */
function newUserTexts(items: readonly Item[]): string[] {
  const texts: string[] = [];
  for (let i = items.length - 1; i >= 0 && isUserMessage(items[i] as Item); i--) {
    texts.unshift(itemText(items[i] as Item));
  }
  return texts;
}

/** A tool's answer as the SDK put it in the input: its JSON text, or the error it reported. */
function resultValue(item: Item): Record<string, unknown> | string {
  const output = (item as { output: unknown }).output;
  const text =
    typeof output === "string" ? output : String((output as { text?: unknown }).text ?? "");
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null) return value as Record<string, unknown>;
  } catch {}
  return text;
}

export function scriptedResponse(items: readonly Item[], turn: number): ModelResponse {
  const output: ModelResponse["output"] = [];
  const say = (text: string) =>
    output.push({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text }],
    });
  const results: Item[] = [];
  for (let i = items.length - 1; i >= 0 && items[i]?.type === "function_call_result"; i--) {
    results.unshift(items[i] as Item);
  }
  if (results.length > 0) {
    say(
      results
        .map((item) => {
          const name = (item as { name: string }).name;
          const value = resultValue(item);
          return typeof value === "string"
            ? `${name} failed: ${value}`
            : describeResult(name, value);
        })
        .join("\n"),
    );
  } else {
    const calls = scriptedCalls(newUserTexts(items));
    for (const [index, { toolName, input }] of calls.entries()) {
      output.push({
        type: "function_call",
        callId: `call-${turn}-${index + 1}`,
        name: toolName,
        arguments: JSON.stringify(input),
        status: "completed",
      });
    }
    if (calls.length === 0) say(`Noted: ${itemText(items.at(-1) as Item)}`);
  }
  return { usage: new Usage(), output };
}

/** The scripted model; `inputs` holds every input it was given, in order. */
export class ScriptedAgentsModel implements Model {
  readonly inputs: Item[][] = [];

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const items: Item[] =
      typeof request.input === "string"
        ? [{ role: "user", content: request.input }]
        : request.input;
    this.inputs.push(items);
    return scriptedResponse(items, this.inputs.length);
  }

  // biome-ignore lint/correctness/useYield: the kit never streams; a stream is refused.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}
