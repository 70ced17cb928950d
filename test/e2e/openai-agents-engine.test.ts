// The OpenAI Agents JS turn engine alone (no wrangler, no runner): scripted models against a fake
// exec tool context, for what the e2e loop does not reach (limits, refusals, approvals, names).

import type { ExecToolContext } from "@exec-inbox/ai-sdk";
import { execFunctionTools, openAiAgentsTurn } from "@exec-inbox/openai-agents";
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  setTracingDisabled,
  tool,
  Usage,
} from "@openai/agents";
import { describe, expect, it } from "vitest";

setTracingDisabled(true);

function fakeContext() {
  const started: string[] = [];
  const running = new Set<string>();
  const ctx = {
    sessionId: "s1",
    inbox: {
      reserveJob: async () => ({ callback: { url: "u", token: "t" } }),
      getJob: async () => ({ status: "running", progress: null }),
    },
    runner: {
      execCommand: async (input: { cmd: string }) => {
        started.push(input.cmd);
        return { session_id: `h${started.length}`, output: "" };
      },
      armCallback: async () => {},
      kill: async () => {},
      writeStdin: async () => ({ exit_code: 0, output: "" }),
    },
    onBackground: (h: string) => running.add(h),
    onEnded: (h: string) => running.delete(h),
  } as unknown as ExecToolContext;
  return { ctx, started, running };
}

type Out = ModelResponse["output"];
class Scripted implements Model {
  readonly inputs: AgentInputItem[][] = [];
  constructor(private readonly next: (call: number) => Out) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(structuredClone(request.input as AgentInputItem[]));
    return { usage: new Usage(), output: this.next(this.inputs.length) };
  }
  // biome-ignore lint/correctness/useYield: never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("no stream");
  }
}
const call = (id: string, name: string, args: unknown): Out[number] => ({
  type: "function_call",
  callId: id,
  name,
  arguments: typeof args === "string" ? args : JSON.stringify(args),
  status: "completed",
});
const say = (text: string): Out[number] => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});
const turnOf = (model: Model, maxTurns?: number, tools: Agent["tools"] = []) =>
  openAiAgentsTurn({
    agent: () => new Agent({ name: "a", model, tools }),
    ...(maxTurns === undefined ? {} : { maxTurns }),
  });

describe("openAiAgentsTurn", () => {
  it("sends each input schema as JSON Schema with only cmd / session_id required", () => {
    const tools = execFunctionTools(fakeContext().ctx);
    const exec = tools.find((t) => t.name === "exec_command");
    const stdin = tools.find((t) => t.name === "write_stdin");
    expect(exec?.parameters).toMatchObject({ type: "object", required: ["cmd"] });
    expect(stdin?.parameters).toMatchObject({ type: "object", required: ["session_id"] });
    expect(
      Object.keys((exec?.parameters as { properties: object } | undefined)?.properties ?? {}),
    ).toEqual(["cmd", "workdir", "yield_time_ms", "max_output_tokens"]);
  });

  it("past maxTurns keeps the turn's calls and results, answers empty, and the next input is right", async () => {
    const { ctx, started, running } = fakeContext();
    const model = new Scripted((n) => [call(`c${n}`, "exec_command", { cmd: `echo ${n}` })]);
    const out = await turnOf(
      model,
      3,
    )({ sessionId: "s1", messages: [], userText: "go", claims: [], tools: ctx, recovered: [] });
    expect(model.inputs).toHaveLength(3);
    expect(out.text).toBe("");
    expect(out.messages.map((m) => m.type)).toEqual([
      "message",
      ...Array(3).fill(["function_call", "function_call_result"]).flat(),
    ]);
    expect(started).toEqual(["echo 1", "echo 2", "echo 3"]);
    expect([...running]).toEqual(["h1", "h2", "h3"]);
  });

  it("a refused input is answered to the model and nothing runs", async () => {
    const { ctx, started } = fakeContext();
    const model = new Scripted((n) =>
      n === 1 ? [call("c1", "exec_command", { cmd: "" })] : [say("ok")],
    );
    const out = await turnOf(model)({
      sessionId: "s1",
      messages: [],
      userText: "go",
      claims: [],
      recovered: [],
      tools: ctx,
    });
    const result = out.messages.find((m) => m.type === "function_call_result") as {
      output: { text: string };
    };
    expect(result.output.text).toContain("at cmd");
    expect(started).toEqual([]);
  });

  it("a tool name the agent does not have is answered to the model, not a failed turn (as the AI SDK does)", async () => {
    const { ctx, started } = fakeContext();
    const model = new Scripted((n) =>
      n === 1
        ? [call("c1", "exec_command", { cmd: "echo once" })]
        : n === 2
          ? [call("c2", "shell", {})]
          : [say("ok")],
    );
    const out = await turnOf(model)({
      sessionId: "s1",
      messages: [],
      userText: "go",
      claims: [],
      recovered: [],
      tools: ctx,
    });
    expect(out.text).toBe("ok");
    expect(started).toEqual(["echo once"]);
  });

  it("a tool of the agent's own that needs approval does not silently vanish", async () => {
    const { ctx } = fakeContext();
    const deploy = tool({
      name: "deploy",
      description: "d",
      strict: false,
      needsApproval: true,
      execute: async () => "deployed",
      parameters: {
        type: "object",
        properties: {},
        required: [],
        additionalProperties: true,
      } as never,
    });
    const model = new Scripted((n) => (n === 1 ? [call("c1", "deploy", {})] : [say("ok")]));
    const turn = turnOf(model, undefined, [deploy]);
    const out = await turn({
      sessionId: "s1",
      messages: [],
      userText: "go",
      claims: [],
      recovered: [],
      tools: ctx,
    });
    expect(out.text).toBe("ok");
    const items = out.messages as Array<{
      type: string;
      name?: string;
      output?: { text?: string };
    }>;
    expect(items.find((item) => item.type === "function_call")?.name).toBe("deploy");
    expect(items.find((item) => item.type === "function_call_result")?.output?.text).toMatch(
      /not approved/,
    );
  });

  it("refuses an agent that already has exec_command", async () => {
    const { ctx } = fakeContext();
    const own = tool({
      name: "exec_command",
      description: "mine",
      strict: false,
      execute: async () => "x",
      parameters: {
        type: "object",
        properties: {},
        required: [],
        additionalProperties: true,
      } as never,
    });
    await expect(
      turnOf(new Scripted(() => [say("ok")]), undefined, [own])({
        sessionId: "s1",
        messages: [],
        userText: "go",
        claims: [],
        recovered: [],
        tools: ctx,
      }),
    ).rejects.toThrow(/exec_command/);
  });

  it("a tool's error reaches the model as its own message, with no advice to try again", async () => {
    const { ctx } = fakeContext();
    const failing = {
      ...ctx,
      inbox: {
        ...ctx.inbox,
        getJob: async () => {
          throw new Error("no command with session_id nope in this session");
        },
      },
    } as unknown as ExecToolContext;
    const model = new Scripted((n) =>
      n === 1 ? [call("c1", "write_stdin", { session_id: "nope" })] : [say("ok")],
    );
    const out = await turnOf(model)({
      sessionId: "s1",
      messages: [],
      userText: "go",
      claims: [],
      recovered: [],
      tools: failing,
    });
    const result = out.messages.find((m) => m.type === "function_call_result") as {
      output: { text: string };
    };
    expect(result.output.text).toBe("no command with session_id nope in this session");
  });
});
