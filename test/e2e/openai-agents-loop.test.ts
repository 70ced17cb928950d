// The kit on OpenAI Agents JS end to end: an `Agent` with a scripted model (no API key) driven by
// the kit's turn engine against real wrangler dev and the real runner, over the signed webhook.
import { join } from "node:path";
import {
  type AgentKit,
  DEFAULT_SYSTEM,
  type ExampleHost,
  startExampleHost,
} from "@exec-inbox/ai-sdk";
import { itemText, openAiAgentsTurn, ScriptedAgentsModel } from "@exec-inbox/openai-agents";
import { Agent, type AgentInputItem, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNNER_TOKEN } from "../runner/runner-process";
import { AGENT_TOKEN, devVar, freePort } from "../support/local-stack";
import { type AgentStack, LEASE_MS, postSignedResume, startAgentStack } from "./agent-stack";

// No traces leave this machine (there is no OpenAI key here, and a test must not try).
setTracingDisabled(true);

let stack: AgentStack;
let host: ExampleHost<AgentInputItem>;
const models = new Map<string, ScriptedAgentsModel>();
/** A test sets it to make the host crash after storing a turn, before its ack. */
let crashAfterStore: string | null = null;

let kit: AgentKit<AgentInputItem>;

beforeAll(async () => {
  stack = await startAgentStack();
  host = await startExampleHost<AgentInputItem>({
    execInboxUrl: stack.dev.base,
    agentToken: AGENT_TOKEN,
    resumeSigningSecret: devVar("RESUME_SIGNING_SECRET"),
    runnerUrl: stack.runner.base,
    runnerToken: RUNNER_TOKEN,
    stateDir: join(stack.stateDir, "openai-agents"),
    port: await freePort(),
    leaseMs: LEASE_MS,
    afterStore: (sessionId) => {
      if (crashAfterStore !== sessionId) return;
      crashAfterStore = null;
      throw new Error("crash after the turn was stored, before its ack");
    },
    turn: openAiAgentsTurn({
      agent: (sessionId) => {
        let model = models.get(sessionId);
        if (model === undefined) {
          model = new ScriptedAgentsModel();
          models.set(sessionId, model);
        }
        return new Agent({ name: "shell", instructions: DEFAULT_SYSTEM, model });
      },
    }),
  });
  kit = host.kit;
}, 90_000);
afterAll(async () => {
  await host?.close();
  await stack?.close();
});

const assistantTexts = (items: readonly AgentInputItem[]) =>
  items.filter((item) => "role" in item && item.role === "assistant").map(itemText);
const runtimeInputs = (sid: string) =>
  (models.get(sid)?.inputs ?? []).map(
    (input) => input.filter((item) => itemText(item).startsWith("[runtime]")).length,
  );
const deliveriesOf = (sid: string) => kit.deliveries.filter((d) => d.sessionId === sid);

async function answered(sid: string, marker: string): Promise<readonly AgentInputItem[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const record = await kit.conversation(sid);
    if (record !== undefined && assistantTexts(record.messages).some((t) => t.includes(marker))) {
      await kit.settled(sid);
      return (await kit.conversation(sid))?.messages ?? [];
    }
    if (Date.now() > deadline) throw new Error(`${sid} never answered with ${marker}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("the kit on OpenAI Agents JS, on real wrangler dev and the real runner", () => {
  it("suspends on a long command, is woken once when it exits, reads it with write_stdin and answers with the output", async () => {
    const sid = "openai-long-command";
    await kit.createSession(sid);
    const first = await kit.sendUserMessage(sid, "run: sleep 2; printf openai-result; exit 3");
    expect(first).toMatch(/^Started command \S+ in the background/);
    const handle = (await kit.conversation(sid))?.running[0];
    expect(await stack.inbox.getSession(sid)).toMatchObject({
      status: "suspended",
      waiting_for_bash: { handles: [handle], wake: "all" },
    });

    const messages = await answered(sid, "openai-result");
    expect(assistantTexts(messages).at(-1)).toBe(
      `Command ${handle} exited with code 3: openai-result`,
    );
    expect(deliveriesOf(sid).map((d) => [d.reason, d.outcome])).toEqual([
      ["background_exec_completed", "accepted"],
    ]);
    // Four model calls: the command, its answer; on the wake, write_stdin, the answer. The wake's
    // runtime message is in the input once, and stays once in every later input.
    expect(runtimeInputs(sid)).toEqual([0, 0, 1, 1]);
    const calls = messages.filter((item) => item.type === "function_call");
    expect(calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ["exec_command", { cmd: "sleep 2; printf openai-result; exit 3", yield_time_ms: 300 }],
      ["write_stdin", { session_id: handle }],
    ]);
    expect(await stack.inbox.getSession(sid)).toMatchObject({
      status: "idle",
      run: null,
      inbox: { pending: 0 },
    });
  });

  it("a replayed signed wake does nothing: the model is not called and nothing registers", async () => {
    const sid = "openai-replay";
    await kit.createSession(sid);
    await kit.sendUserMessage(sid, "run: sleep 1; printf replayed");
    await answered(sid, "replayed");
    const [delivery] = deliveriesOf(sid);
    const { lifetime } = await stack.inbox.getSession(sid);
    const body = JSON.stringify({
      type: "session.resume",
      tenant: "default",
      session_id: sid,
      lifetime,
      resume_id: delivery?.resumeId,
      reason: "background_exec_completed",
      inbox: { pending: 1 },
    });
    const calls = models.get(sid)?.inputs.length;
    const trail = await stack.events(sid);
    const statuses = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const answer = await postSignedResume(host.url, delivery?.resumeId ?? "", body);
        return answer.status;
      }),
    );
    expect(statuses).toEqual(Array(10).fill(200));
    await kit.settled(sid);
    expect(models.get(sid)?.inputs.length).toBe(calls);
    expect(await stack.events(sid)).toEqual(trail);
  });

  it("a host that fails after storing the woken turn, before its ack, retries without the model seeing the result twice", async () => {
    const sid = "openai-crash-before-ack";
    await kit.createSession(sid);
    await kit.sendUserMessage(sid, "run: sleep 1; printf once-only");
    crashAfterStore = sid;
    const messages = await answered(sid, "once-only");
    // The retried run claimed the same envelope again after the lease, and skipped it.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 1500));
    await kit.settled(sid);
    expect(crashAfterStore).toBeNull();
    const record = await kit.conversation(sid);
    expect(record?.messages).toEqual(messages);
    expect(record?.messages.filter((item) => itemText(item).startsWith("[runtime]"))).toHaveLength(
      1,
    );
    expect(await stack.inbox.getSession(sid)).toMatchObject({
      status: "idle",
      inbox: { pending: 0 },
    });
  });
});
