// The agent loop when something dies: the agent host between claim and ack, or the runner while a
// command runs. AI SDK mock models, real wrangler dev, the real runner process.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { viewWhen } from "../support/local-stack";
import {
  type AgentStack,
  assistantTexts,
  conversationWhen,
  LEASE_MS,
  startAgentStack,
  toolResults,
  userTexts,
} from "./agent-stack";

let stack: AgentStack;

beforeAll(async () => {
  stack = await startAgentStack();
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

class SimulatedCrash extends Error {}

/** The session goes idle, nothing claimed and no run, within a few leases (a new host finished it). */
async function idleOnceTheLeaseEnds(sid: string) {
  const idle = await viewWhen(stack.dev.base, sid, (view) => view.status === "idle", LEASE_MS * 5);
  expect(idle).toMatchObject({ run: null, inbox: { pending: 0, claimed: 0 } });
}

const runtimeMessages = (texts: string[]) => texts.filter((text) => text.startsWith("[runtime]"));

describe("the agent kit when a process dies", () => {
  it("redelivers a claim the host stored but never acked, and the model sees the result exactly once", async () => {
    const sid = "agent-host-crash";
    let crashArmed = false;
    const first = await stack.startHost({
      afterStore: () => {
        if (!crashArmed) return;
        crashArmed = false;
        throw new SimulatedCrash("host dies after storing the turn, before the ack");
      },
    });
    await first.host.kit.createSession(sid);
    await first.host.kit.sendUserMessage(sid, "run: sleep 2; printf survived");
    crashArmed = true;

    // The resumed turn runs and is stored, then the host dies holding the claim.
    const stored = await conversationWhen(first, sid, (r) =>
      assistantTexts(r).some((text) => text.includes("survived")),
    );
    await first.host.kit.settled(sid);
    expect(crashArmed).toBe(false);
    expect(stored.activeRun).not.toBeNull();
    await first.host.close();
    const held = await stack.inbox.getSession(sid);
    expect(held).toMatchObject({ status: "running", inbox: { pending: 0, claimed: 1 } });

    // A new host process on the same store: it finishes the run once the lease ends.
    const second = await stack.startHost();
    await idleOnceTheLeaseEnds(sid);
    await second.host.kit.settled(sid);
    expect(second.models.get(sid)?.doGenerateCalls ?? []).toHaveLength(0);

    const events = await stack.events(sid);
    const envelopeId = stored.applied[0];
    const claims = events.filter(
      (event) => event.type === "claim" && (event.ids as string[]).includes(envelopeId!),
    );
    expect(claims).toHaveLength(2);
    expect(events.filter((event) => event.type === "ack")).toHaveLength(1);
    expect(events.filter((event) => event.type === "delivery")).toHaveLength(1);
    expect(first.host.kit.deliveries.filter((d) => d.sessionId === sid)).toHaveLength(1);
    expect(second.host.kit.deliveries).toEqual([]);

    // The next turn's prompt holds the runtime message and the result once each.
    expect(await second.host.kit.sendUserMessage(sid, "and now?")).toBe("Noted: and now?");
    const prompt = second.models.get(sid)!.doGenerateCalls[0]!.prompt;
    expect(runtimeMessages(userTexts(prompt))).toHaveLength(1);
    const record = await second.host.kit.conversation(sid);
    expect(toolResults(record!).filter((r) => r.toolName === "write_stdin")).toHaveLength(1);
    expect(assistantTexts(record!).filter((text) => text.includes("survived"))).toHaveLength(1);
    await second.host.close();
  });

  it("restarts a host process SIGKILLed between storing a turn and acking it, and the model sees the result once", async () => {
    const sid = "agent-host-process-killed";
    const promptLog = join(stack.stateDir, "prompts.jsonl");
    // Its first stored turn answers the human; the second is the resumed turn: killed before the ack.
    const doomed = await stack.spawnHostProcess({
      AGENT_KILL_AFTER_STORE: "2",
      AGENT_PROMPT_LOG: promptLog,
    });
    expect((await doomed.post("/sessions", { id: sid })).status).toBe(201);
    const started = await doomed.post(`/sessions/${sid}/messages`, {
      content: "run: sleep 2; printf process-survived",
    });
    expect(started.body.answer).toMatch(/in the background/);
    expect(await doomed.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(await stack.inbox.getSession(sid)).toMatchObject({
      status: "running",
      inbox: { pending: 0, claimed: 1 },
    });

    const restarted = await stack.spawnHostProcess({ AGENT_PROMPT_LOG: promptLog });
    await idleOnceTheLeaseEnds(sid);
    const reply = await restarted.post(`/sessions/${sid}/messages`, { content: "and now?" });
    expect(reply.body).toEqual({ answer: "Noted: and now?" });
    await restarted.kill();

    const prompts = readFileSync(promptLog, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { pid: number; sessionId: string; prompt: any[] })
      .filter((entry) => entry.sessionId === sid);
    const byRestarted = prompts.filter((entry) => entry.pid !== prompts[0]!.pid);
    // The restarted process spent no model call on the recovered claim; its one prompt holds the
    // runtime message and the write_stdin result once each.
    expect(byRestarted).toHaveLength(1);
    const prompt = byRestarted[0]!.prompt;
    expect(runtimeMessages(userTexts(prompt))).toHaveLength(1);
    const results = prompt.filter((message) => message.role === "tool");
    expect(JSON.stringify(results).match(/process-survived/g)).toHaveLength(1);
    const events = await stack.events(sid);
    expect(events.filter((event) => event.type === "claim")).toHaveLength(2);
    expect(events.filter((event) => event.type === "ack")).toHaveLength(1);
    expect(events.filter((event) => event.type === "delivery")).toHaveLength(1);
  });

  it("tells the model the outcome is unknown when the runner dies with the command", async () => {
    const sid = "agent-runner-dies";
    const agent = await stack.startHost();
    await agent.host.kit.createSession(sid);
    await agent.host.kit.sendUserMessage(sid, "run: sleep 30; printf never");
    const handle = (await agent.host.kit.conversation(sid))?.running[0];
    expect((await stack.inbox.getSession(sid)).status).toBe("suspended");

    await stack.restartRunner();
    const record = await conversationWhen(agent, sid, (r) =>
      assistantTexts(r).some((text) => text.includes("unknown")),
    );
    await agent.host.kit.settled(sid);
    const deliveries = agent.host.kit.deliveries.filter((d) => d.sessionId === sid);
    expect(deliveries).toEqual([
      expect.objectContaining({ reason: "background_exec_outcome_unknown", outcome: "accepted" }),
    ]);
    const prompts = agent.models.get(sid)!.doGenerateCalls.map((call) => call.prompt);
    const told = runtimeMessages(userTexts(prompts.at(-1)!));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain("Completion is not confirmed");
    expect(told[0]).toContain("unknown outcome");
    // write_stdin could not reach the process; exec-inbox's record says lost.
    expect(toolResults(record).at(-1)?.value).toMatchObject({ session_id: handle, status: "lost" });
    expect(assistantTexts(record).at(-1)).toBe(
      `The outcome of command ${handle} is unknown (the runner lost it); it may or may not have run to the end.`,
    );
    await viewWhen(stack.dev.base, sid, (view) => view.status === "idle");
    await sleep(500);
    expect(agent.host.kit.deliveries.filter((d) => d.sessionId === sid)).toHaveLength(1);
    await agent.host.close();
  });

  it("tells the model plainly when its runner vanished for good: the job is lost by heartbeat timeout and the agent woken once", async () => {
    const sid = "agent-runner-vanishes";
    const agent = await stack.startHost({ heartbeatTimeoutMs: 5_000 });
    await agent.host.kit.createSession(sid);
    await agent.host.kit.sendUserMessage(sid, "run: sleep 60; printf never");
    const handle = (await agent.host.kit.conversation(sid))?.running[0];
    const job = await stack.inbox.getJob(sid, handle!);
    expect(job).toMatchObject({ status: "running", heartbeat_timeout_ms: 5_000 });

    // The runner dies and nothing takes its place: no restart reports the process lost.
    await stack.vanishRunner();
    try {
      const record = await conversationWhen(
        agent,
        sid,
        (r) => assistantTexts(r).some((text) => text.includes("unknown")),
        30_000,
      );
      await agent.host.kit.settled(sid);
      expect(await stack.inbox.getJob(sid, handle!)).toMatchObject({
        status: "lost",
        ended_by: "heartbeat_timeout",
      });
      const prompts = agent.models.get(sid)!.doGenerateCalls.map((call) => call.prompt);
      const told = runtimeMessages(userTexts(prompts.at(-1)!));
      expect(told).toHaveLength(1);
      expect(told[0]).toContain("stopped sending heartbeats");
      // write_stdin cannot reach the runner; exec-inbox's record says why, in words.
      expect(toolResults(record).at(-1)?.value).toMatchObject({
        session_id: handle,
        status: "lost",
        note: expect.stringContaining("stopped sending heartbeats"),
      });
      const deliveries = agent.host.kit.deliveries.filter((d) => d.sessionId === sid);
      expect(deliveries).toEqual([
        expect.objectContaining({ reason: "background_exec_outcome_unknown", outcome: "accepted" }),
      ]);
    } finally {
      await stack.restartRunner();
      await agent.host.close();
    }
  });
});
