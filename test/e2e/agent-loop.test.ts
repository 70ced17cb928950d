// The agent loop end to end: AI SDK mock models driving the kit against real wrangler dev and the
// real runner. Each test asserts what the model was given and how many resumes reached the host.
import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { afterFirstCycle } from "../support/e2e-arrange";
import { devVar, viewWhen } from "../support/local-stack";
import {
  type AgentStack,
  assistantTexts,
  conversationWhen,
  type HostInstance,
  startAgentStack,
  toolCalls,
  toolResults,
  userTexts,
} from "./agent-stack";

let stack: AgentStack;
let agent: HostInstance;

beforeAll(async () => {
  stack = await startAgentStack();
  agent = await stack.startHost();
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

const deliveriesOf = (sessionId: string) =>
  agent.host.kit.deliveries.filter((delivery) => delivery.sessionId === sessionId);
const promptsOf = (sessionId: string) =>
  (agent.models.get(sessionId)?.doGenerateCalls ?? []).map((call) => call.prompt);
const runtimeMessages = (texts: string[]) => texts.filter((text) => text.startsWith("[runtime]"));

describe("the agent kit on real wrangler dev and the real runner", () => {
  it("suspends on a long command, is resumed exactly once when it exits, reads it with write_stdin and answers with the output", async () => {
    const sid = "agent-long-command";
    await agent.host.kit.createSession(sid);
    const first = await agent.host.kit.sendUserMessage(
      sid,
      "run: sleep 2; printf inbox-result; exit 7",
    );
    expect(first).toMatch(/^Started command \S+ in the background/);
    const handle = (await agent.host.kit.conversation(sid))?.running[0];
    const suspended = await stack.inbox.getSession(sid);
    expect(suspended).toMatchObject({
      status: "suspended",
      run: null,
      waiting_for_bash: { handles: [handle], wake: "all" },
    });
    expect(deliveriesOf(sid)).toEqual([]);

    const record = await conversationWhen(agent, sid, (r) =>
      assistantTexts(r).some((text) => text.includes("inbox-result")),
    );
    await agent.host.kit.settled(sid);
    expect(assistantTexts(record).at(-1)).toBe(
      `Command ${handle} exited with code 7: inbox-result`,
    );
    expect(deliveriesOf(sid)).toEqual([
      {
        sessionId: sid,
        resumeId: expect.any(String),
        reason: "background_exec_completed",
        outcome: "accepted",
      },
    ]);
    // The resumed model was given the runtime message once, then called write_stdin on the handle.
    const prompts = promptsOf(sid);
    expect(prompts).toHaveLength(4);
    const resumedPrompt = prompts[2]!;
    const runtime = runtimeMessages(userTexts(resumedPrompt));
    expect(runtime).toHaveLength(1);
    expect(runtime[0]).toContain(`session_id="${handle}"`);
    expect(runtime[0]?.split("\n")[0]).toBe(
      `[runtime] Background command session_id="${handle}": exited with code 7.`,
    );
    expect(toolCalls(record)).toEqual([
      {
        toolName: "exec_command",
        input: { cmd: "sleep 2; printf inbox-result; exit 7", yield_time_ms: 300 },
      },
      { toolName: "write_stdin", input: { session_id: handle } },
    ]);
    expect(toolResults(record)[1]?.value).toMatchObject({ exit_code: 7, output: "inbox-result" });
    expect(runtimeMessages(userTexts(prompts[3]!))).toHaveLength(1);

    const final = await viewWhen(stack.dev.base, sid, (view) => view.status === "idle");
    expect(final).toMatchObject({
      run: null,
      waiting_for_bash: null,
      inbox: { pending: 0, claimed: 0 },
    });
    const events = await stack.events(sid);
    expect(events.filter((event) => event.type === "delivery")).toHaveLength(1);
    expect(events.filter((event) => event.type === "ack")).toHaveLength(1);
    await sleep(1000);
    expect(deliveriesOf(sid)).toHaveLength(1);
  });

  it("waits for both of two commands with wake all and is resumed once with both results", async () => {
    const sid = "agent-two-commands";
    await agent.host.kit.createSession(sid);
    await agent.host.kit.sendUserMessage(
      sid,
      "run: sleep 1; printf first\nrun: sleep 3; printf second",
    );
    const started = (await agent.host.kit.conversation(sid))!;
    // The two reservations run concurrently, so `running` is in the order they came back; the
    // tool results are in the order the model called them: [the 1 s command, the 3 s command].
    const handles = toolResults(started).map((result) => String(result.value.session_id));
    expect(handles).toHaveLength(2);
    expect([...started.running].sort()).toEqual([...handles].sort());
    expect(await stack.inbox.getSession(sid)).toMatchObject({
      status: "suspended",
      waiting_for_bash: { handles: expect.arrayContaining(handles), wake: "all" },
    });
    // The first result is staged: stored, the wait still armed on the second, nobody woken.
    const staged = await viewWhen(stack.dev.base, sid, (view) => view.inbox.pending === 1);
    expect(staged).toMatchObject({
      status: "suspended",
      waiting_for_bash: { handles: [handles[1]] },
    });
    expect(deliveriesOf(sid)).toEqual([]);

    const record = await conversationWhen(agent, sid, (r) =>
      assistantTexts(r).some((text) => text.includes("second")),
    );
    await agent.host.kit.settled(sid);
    expect(deliveriesOf(sid)).toHaveLength(1);
    const resumedPrompt = promptsOf(sid)[2]!;
    expect(runtimeMessages(userTexts(resumedPrompt))).toHaveLength(2);
    expect(assistantTexts(record).at(-1)).toBe(
      [
        `Command ${handles[0]} exited with code 0: first`,
        `Command ${handles[1]} exited with code 0: second`,
      ].join("\n"),
    );
    await viewWhen(
      stack.dev.base,
      sid,
      (view) => view.status === "idle" && view.inbox.pending === 0,
    );
  });

  it("answers a human message while suspended, keeps the wait armed, and is still resumed once when the command exits", async () => {
    const sid = "agent-human-message";
    await agent.host.kit.createSession(sid);
    await agent.host.kit.sendUserMessage(sid, "run: sleep 4; printf late-result");
    const before = await stack.inbox.getSession(sid);
    expect(before.status).toBe("suspended");

    const reply = await agent.host.kit.sendUserMessage(sid, "how is it going?");
    expect(reply).toBe("Noted: how is it going?");
    const after = await stack.inbox.getSession(sid);
    // The same wait, not a new one: its start and ceiling are unchanged.
    expect(after).toMatchObject({ status: "suspended", run: null });
    expect(after.waiting_for_bash).toEqual(before.waiting_for_bash);

    const record = await conversationWhen(agent, sid, (r) =>
      assistantTexts(r).some((text) => text.includes("late-result")),
    );
    await agent.host.kit.settled(sid);
    expect(deliveriesOf(sid)).toHaveLength(1);
    const last = promptsOf(sid).at(-1)!;
    expect(userTexts(last).filter((text) => text === "how is it going?")).toHaveLength(1);
    expect(runtimeMessages(userTexts(last))).toHaveLength(1);
    expect(assistantTexts(record)).toContain("Noted: how is it going?");
  });

  it("does not let a re-created session take the old command's result: it is refused and wakes nobody", async () => {
    const sid = "agent-recreated";
    await agent.host.kit.createSession(sid);
    await agent.host.kit.sendUserMessage(sid, "run: sleep 2; printf old-lifetime");
    const handle = (await agent.host.kit.conversation(sid))?.running[0];
    const old = await stack.inbox.getSession(sid);
    await agent.host.kit.deleteSession(sid);
    await agent.host.kit.createSession(sid);
    const fresh = await stack.inbox.getSession(sid);
    expect(fresh.lifetime).not.toBe(old.lifetime);
    const callsBefore = promptsOf(sid).length;

    // The runner's completion reaches the new lifetime's object and is refused there.
    const deadline = Date.now() + 20_000;
    let refused: Record<string, unknown> | undefined;
    while (refused === undefined && Date.now() < deadline) {
      refused = (await stack.events(sid)).find(
        (event) => event.type === "completion" && event.handle === handle,
      );
      if (refused === undefined) await sleep(200);
    }
    expect(refused).toMatchObject({ outcome: "lifetime_ended", token_lifetime: old.lifetime });
    await sleep(1500);
    expect(deliveriesOf(sid)).toEqual([]);
    expect(promptsOf(sid)).toHaveLength(callsBefore);
    expect(await stack.inbox.getSession(sid)).toMatchObject({
      status: "idle",
      inbox: { pending: 0, claimed: 0 },
      jobs: { running: 0, done: 0 },
    });
    expect((await agent.host.kit.conversation(sid))?.messages).toEqual([]);
  });

  it("runs the agent once for a resume delivered twice (same webhook-id), refuses a forged one and one of another lifetime", async () => {
    const sid = "agent-duplicate-resume";
    await afterFirstCycle(agent, sid, "once");
    const [delivery] = deliveriesOf(sid);
    const calls = promptsOf(sid).length;
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
    const post = (secret: string, text = body) => {
      const at = new Date();
      const signature = new Webhook(secret).sign(delivery!.resumeId, at, text);
      return fetch(`${agent.host.url}/resume`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": delivery!.resumeId,
          "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
          "webhook-signature": signature,
        },
        body: text,
      });
    };
    const again = await post(devVar("RESUME_SIGNING_SECRET"));
    expect([again.status, await again.json()]).toEqual([200, { duplicate: true }]);
    const forged = await post("whsec_Zm9yZ2VkLXNlY3JldC1mb3JnZWQtc2VjcmV0LTAxMjM=");
    expect(forged.status).toBe(401);
    const elsewhere = await post(
      devVar("RESUME_SIGNING_SECRET"),
      body.replace(`"lifetime":"${lifetime}"`, '"lifetime":"another-lifetime"'),
    );
    expect(elsewhere.status).toBe(404);
    await agent.host.kit.settled(sid);
    expect(deliveriesOf(sid).map((d) => d.outcome)).toEqual(["accepted", "duplicate", "unknown"]);
    expect(promptsOf(sid)).toHaveLength(calls);
    expect(await stack.inbox.getSession(sid)).toMatchObject({ status: "idle", run: null });
  });
});
