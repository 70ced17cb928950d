// Recovery without re-running on OpenAI Agents JS: a host whose model turn stops for good after its
// exec_command ran (the turn never stored, as when the process dies), then a new host on the same
// store. Real wrangler dev and the real runner; the command counts its runs in its workspace.
import { join } from "node:path";
import {
  DEFAULT_SYSTEM,
  type ExampleHost,
  type SessionRecord,
  startExampleHost,
} from "@exec-inbox/ai-sdk";
import { itemText, openAiAgentsTurn, ScriptedAgentsModel } from "@exec-inbox/openai-agents";
import {
  Agent,
  type AgentInputItem,
  type ModelRequest,
  type ModelResponse,
  setTracingDisabled,
} from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNNER_TOKEN } from "../runner/runner-process";
import { AGENT_TOKEN, devVar, freePort, viewWhen } from "../support/local-stack";
import { callRunner } from "../support/runner-client";
import { type AgentStack, LEASE_MS, startAgentStack } from "./agent-stack";

setTracingDisabled(true);

let stack: AgentStack;

beforeAll(async () => {
  stack = await startAgentStack();
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

/** Stops for good when given the result of its first call: the turn is never stored. */
class ModelThatDiesAfterItsCall extends ScriptedAgentsModel {
  override async getResponse(request: ModelRequest): Promise<ModelResponse> {
    if (this.inputs.length === 1) {
      this.inputs.push(request.input as AgentInputItem[]);
      return new Promise<never>(() => {});
    }
    return super.getResponse(request);
  }
}

/** Both hosts listen on one port: the session's resume URL names it. */
async function hostWith(stateDir: string, port: number, model: ScriptedAgentsModel) {
  return startExampleHost<AgentInputItem>({
    execInboxUrl: stack.dev.base,
    agentToken: AGENT_TOKEN,
    resumeSigningSecret: devVar("RESUME_SIGNING_SECRET"),
    runnerUrl: stack.runner.base,
    runnerToken: RUNNER_TOKEN,
    stateDir,
    port,
    leaseMs: LEASE_MS,
    turn: openAiAgentsTurn({
      agent: () => new Agent({ name: "shell", instructions: DEFAULT_SYSTEM, model }),
    }),
  });
}

/** How many times the runner ran the session's command: the lines it appended to its file. */
async function runs(sid: string): Promise<number> {
  const answer = await callRunner(stack.runner.base, RUNNER_TOKEN, "/v1/exec_command", {
    cmd: "cat ran.count 2>/dev/null || true",
    workspace: sid,
    yield_time_ms: 5_000,
  });
  expect(answer.body).toMatchObject({ exit_code: 0 });
  return String(answer.body.output)
    .split("\n")
    .filter((line) => line === "ran").length;
}

async function conversationWhen(
  host: ExampleHost<AgentInputItem>,
  sid: string,
  accept: (record: SessionRecord<AgentInputItem>) => boolean,
) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const record = await host.kit.conversation(sid);
    if (record !== undefined && accept(record)) return record;
    if (Date.now() > deadline) throw new Error(`${sid}: ${JSON.stringify(record?.messages)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const assistantTexts = (items: readonly AgentInputItem[]) =>
  items.filter((item) => "role" in item && item.role === "assistant").map(itemText);

describe("the kit on OpenAI Agents JS after a host stopped between exec_command and storing the turn", () => {
  it("gives the call its job's truth, waits for it, and the model reads its end: the command ran once", async () => {
    // Unique: the runner's workspaces outlive the stack, and the count must start at zero.
    const sid = `openai-recovery-${Date.now().toString(36)}`;
    const stateDir = join(stack.stateDir, "openai-recovery");
    const dying = new ModelThatDiesAfterItsCall();
    const port = await freePort();
    const first = await hostWith(stateDir, port, dying);
    await first.kit.createSession(sid);
    void first.kit.sendUserMessage(sid, "run: echo ran >> ran.count; sleep 2; printf openai-bg");
    // The model was given its call's result: the command ran and the turn hangs, never stored.
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (dying.inputs.length < 2) return;
        clearInterval(poll);
        resolve();
      }, 50);
    });
    await first.close();
    const [job] = (await stack.inbox.listJobs(sid, {})).jobs;
    expect(job).toBeDefined();

    const model = new ScriptedAgentsModel();
    const second = await hostWith(stateDir, port, model);
    const record = await conversationWhen(second, sid, (r) =>
      assistantTexts(r.messages).some((text) => text.includes("openai-bg")),
    );
    await viewWhen(stack.dev.base, sid, (view) => view.status === "idle", LEASE_MS * 10);
    await second.close();

    expect(await runs(sid)).toBe(1);
    expect((await stack.inbox.listJobs(sid, {})).jobs).toHaveLength(1);
    const calls = record.messages.filter(
      (item) => item.type === "function_call" && item.name === "exec_command",
    );
    expect(calls).toHaveLength(1);
    // The restarted host's first input ends with the recovered call's result: the job's truth.
    const recovered = model.inputs[0]!.at(-1) as { type: string; output: { text: string } };
    expect(recovered.type).toBe("function_call_result");
    const value = JSON.parse(recovered.output.text);
    expect(value).toMatchObject({
      session_id: job!.handle,
      note: expect.stringContaining("was not started again"),
    });
    expect(["running", "completed"]).toContain(value.status);
  });
});
