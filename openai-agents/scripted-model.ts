// A model for OpenAI Agents JS that needs no API key, scripted like agent/scripted-model.ts: a line
// `run: <command>` runs it; a runtime message makes it read the handle with write_stdin; a tool
// result is answered in words. Every request's input is kept, for tests to read what it was shown.
import { type AgentInputItem, type Model, type ModelRequest, Usage } from "@openai/agents";

const HANDLE = /session_id="([^"]+)"/;

const textOf = (item: AgentInputItem): string => {
  const content = (item as { content?: unknown }).content;
  if (typeof content === "string") return content;
  return JSON.stringify(content ?? (item as { output?: unknown }).output ?? "");
};

function describe(name: string, raw: unknown): string {
  const text =
    typeof raw === "string" ? raw : ((raw as { text?: string })?.text ?? JSON.stringify(raw));
  let value: Record<string, unknown> = {};
  try {
    value = JSON.parse(text);
  } catch {
    return `${name} answered: ${text}`;
  }
  const handle = value.session_id === undefined ? "" : ` ${String(value.session_id)}`;
  if (name === "exec_command" && value.exit_code === undefined) {
    return `Started command${handle} in the background; I will read it when it ends.`;
  }
  return `Command${handle} exited with code ${String(value.exit_code)}: ${String(value.output)}`;
}

export class ScriptedAgentsModel implements Model {
  /** The input of every request, in order. */
  readonly inputs: AgentInputItem[][] = [];
  private calls = 0;

  async getResponse(request: ModelRequest) {
    const input: AgentInputItem[] =
      typeof request.input === "string"
        ? [{ role: "user", content: request.input }]
        : request.input;
    this.inputs.push(structuredClone(input));
    const last = input.at(-1);
    const call = (name: string, args: unknown) => {
      this.calls += 1;
      return {
        type: "function_call" as const,
        callId: `call-${this.calls}`,
        name,
        arguments: JSON.stringify(args),
        status: "completed" as const,
      };
    };
    const say = (text: string) => ({
      type: "message" as const,
      role: "assistant" as const,
      status: "completed" as const,
      content: [{ type: "output_text" as const, text }],
    });
    let output: Array<ReturnType<typeof call> | ReturnType<typeof say>>;
    if (last !== undefined && (last as { type?: string }).type === "function_call_result") {
      const result = last as { name: string; output: unknown };
      output = [say(describe(result.name, result.output))];
    } else {
      const text = last === undefined ? "" : textOf(last);
      const handle = HANDLE.exec(text)?.[1];
      const command = /(?:^|\n)run: (.+)/.exec(text)?.[1];
      output =
        text.includes("[runtime]") && handle !== undefined
          ? [call("write_stdin", { session_id: handle })]
          : command !== undefined
            ? [call("exec_command", { cmd: command, yield_time_ms: 300 })]
            : [say(`Noted: ${text}`)];
    }
    return { usage: new Usage(), output };
  }

  // biome-ignore lint/correctness/useYield: the kit never streams; a stream here would be a bug.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}
