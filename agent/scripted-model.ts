// A model that needs no API key: the AI SDK's own mock language model, scripted to drive the exec
// loop (start commands, wait, read results with write_stdin, answer). Tests read its recorded prompts.
import { MockLanguageModelV4 } from "ai/test";

type CallOptions = MockLanguageModelV4["doGenerateCalls"][number];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;
type PromptMessage = CallOptions["prompt"][number];

const USAGE: GenerateResult["usage"] = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

const HANDLE = /session_id="([^"]+)"/g;

function textOf(message: PromptMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((part) => ("text" in part ? part.text : "")).join("");
}

/** The trailing user messages: what arrived since the model last spoke. */
function newUserTexts(prompt: readonly PromptMessage[]): string[] {
  const texts: string[] = [];
  for (let i = prompt.length - 1; i >= 0 && prompt[i]?.role === "user"; i--) {
    texts.unshift(textOf(prompt[i] as PromptMessage));
  }
  return texts;
}

/** What the scripted agent says of one tool result (any framework's scripted model). */
export function describeResult(toolName: string, value: Record<string, unknown>): string {
  const handle = value.session_id === undefined ? "" : ` ${String(value.session_id)}`;
  if (value.status === "lost" || value.status === "unknown") {
    return `The outcome of command${handle} is unknown (the runner lost it); it may or may not have run to the end.`;
  }
  if (toolName === "exec_command" && value.exit_code === undefined) {
    // It believes what the tool's note promised, no more.
    const promised = String(value.note ?? "").includes("You will get a runtime message");
    return promised
      ? `Started command${handle} in the background; I will read it when it ends.`
      : `Started command${handle} in the background; nothing will tell me when it ends, so I will check on it with write_stdin.`;
  }
  const outcome =
    typeof value.outcome === "string"
      ? value.outcome
      : `exited with code ${String(value.exit_code)}`;
  return `Command${handle} ${outcome}: ${String(value.output)}`;
}

/**
 * The tool calls the scripted agent makes for the user messages that arrived since it last spoke:
 * `write_stdin` on each handle a runtime message names, `exec_command` for each `run: ` line (a
 * 300 ms yield) and each `wait: ` line (a 30 s yield).
 */
export function scriptedCalls(
  texts: readonly string[],
): Array<{ toolName: string; input: unknown }> {
  const calls: Array<{ toolName: string; input: unknown }> = [];
  for (const text of texts) {
    if (text.startsWith("[runtime]")) {
      // A runtime message names its handle more than once; read each handle once.
      const handles = new Set([...text.matchAll(HANDLE)].map(([, handle]) => handle));
      for (const handle of handles)
        calls.push({ toolName: "write_stdin", input: { session_id: handle } });
      continue;
    }
    for (const line of text.split("\n")) {
      if (line.startsWith("run: "))
        calls.push({ toolName: "exec_command", input: { cmd: line.slice(5), yield_time_ms: 300 } });
      // A command the model means to see end within its call, however busy the machine.
      if (line.startsWith("wait: "))
        calls.push({
          toolName: "exec_command",
          input: { cmd: line.slice(6), yield_time_ms: 30_000 },
        });
    }
  }
  return calls;
}

/** One scripted step: tool calls for new work, else a text answer from the latest tool results. */
export function scriptedStep(prompt: readonly PromptMessage[]): GenerateResult {
  const last = prompt.at(-1);
  const content: GenerateResult["content"] = [];
  let calls = 0;
  const call = (toolName: string, input: unknown) => {
    calls++;
    content.push({
      type: "tool-call",
      toolCallId: `call-${prompt.length}-${calls}`,
      toolName,
      input: JSON.stringify(input),
    });
  };
  if (last?.role === "tool") {
    const lines = last.content.flatMap((part) => {
      if (part.type !== "tool-result") return [];
      const output = part.output;
      if (output.type === "json" && typeof output.value === "object" && output.value !== null) {
        return [describeResult(part.toolName, output.value as Record<string, unknown>)];
      }
      return [`${part.toolName} failed: ${JSON.stringify(output)}`];
    });
    content.push({ type: "text", text: lines.join("\n") });
  } else {
    for (const { toolName, input } of scriptedCalls(newUserTexts(prompt))) call(toolName, input);
    if (calls === 0) {
      content.push({ type: "text", text: `Noted: ${last === undefined ? "" : textOf(last)}` });
    }
  }
  return {
    content,
    finishReason: { unified: calls > 0 ? "tool-calls" : "stop", raw: undefined },
    usage: USAGE,
    warnings: [],
  };
}

/**
 * A scripted agent: a line `run: <command>` in a user message runs it; a runtime message about a
 * handle makes it call `write_stdin` on that handle; tool results are answered in words.
 * `onPrompt` sees every prompt (a host process logs them for tests that outlive it).
 */
export function scriptedModel(
  onPrompt: (prompt: readonly PromptMessage[]) => void = () => {},
): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: "exec-inbox-scripted",
    modelId: "scripted",
    doGenerate: async (options) => {
      onPrompt(options.prompt);
      return scriptedStep(options.prompt);
    },
  });
}
