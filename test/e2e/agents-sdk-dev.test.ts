// The Agents SDK kit's example agent under `wrangler dev` beside exec-inbox (two processes, bound
// both ways) with the real runner: the loop through one wake by the binding, and the agent's
// Worker down while its command ends — the wake is retried with the same resume_id and, once the
// agent is back, applied once (its conversation kept in the agent's own SQLite across the restart).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ExecInboxClient } from "@exec-inbox/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNNER_TOKEN, type RunnerProcess, startRunnerProcess } from "../runner/runner-process";
import { AGENT_TOKEN, devVar } from "../support/local-stack";
import { SHELL_AGENT, startTwoWorkers, type TwoWorkers } from "../support/two-workers";

const runnerDir = mkdtempSync(join(tmpdir(), "exec-inbox-sdk-runner-"));
let runner: RunnerProcess;
let workers: TwoWorkers;

beforeAll(async () => {
  runner = await startRunnerProcess(runnerDir);
  workers = await startTwoWorkers({
    ...SHELL_AGENT,
    vars: { EXEC_INBOX_TOKEN: AGENT_TOKEN, RUNNER_URL: runner.base, RUNNER_TOKEN },
  });
}, 120_000);

afterAll(async () => {
  await workers?.close();
  await runner?.kill();
  rmSync(runnerDir, { recursive: true, force: true });
});

const inbox = () => new ExecInboxClient({ baseUrl: workers.execInbox.base, token: AGENT_TOKEN });
type Message = { role: string; content: unknown };
const textOf = (message: Message | undefined): string => JSON.stringify(message?.content ?? "");
const transcript = async (sid: string): Promise<Message[]> =>
  (
    (await (await fetch(`${workers.agent.base}/agents/${sid}/transcript`)).json()) as {
      messages: Message[];
    }
  ).messages;
const prompt = async (sid: string, text: string): Promise<string> =>
  (
    (await (
      await fetch(`${workers.agent.base}/agents/${sid}/prompt`, {
        method: "POST",
        body: JSON.stringify({ text }),
      })
    ).json()) as { answer: string }
  ).answer;
const deliveries = async (sid: string) => {
  const answer = await fetch(
    `${workers.execInbox.base}/v1/ops/sessions/default/${sid}/events?limit=500`,
    { headers: { authorization: `Bearer ${devVar("OPERATOR_TOKENS")}` } },
  );
  const { events } = (await answer.json()) as { events: Array<Record<string, unknown>> };
  return events.filter((event) => event.type === "delivery");
};

async function until<T>(check: () => Promise<T | undefined>, timeoutMs = 45_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(200)) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
  }
  throw new Error(
    `timed out waiting; exec-inbox: ${workers.execInbox.logs().slice(-3000)}\nagent: ${workers.agent.logs().slice(-3000)}`,
  );
}

const runtimeCount = (messages: Message[]) =>
  messages.filter((message) => textOf(message).includes("[runtime]")).length;

describe("the Agents SDK agent under wrangler dev, woken through its binding", () => {
  it("a long command suspends the agent, one wake through the binding brings it back, and it answers with the result", async () => {
    const sid = `sdk-dev-${Date.now()}`;
    await inbox().createSession({ id: sid, resume_binding: "SHELL_AGENT_WAKE" });
    const first = await prompt(sid, "run: sleep 2; printf sdk-result; exit 4");
    expect(first).toMatch(/^Started command \S+ in the background/);
    expect((await inbox().getSession(sid)).status).toBe("suspended");
    const messages = await until(async () => {
      const all = await transcript(sid);
      return textOf(all.at(-1)).includes("exited with code 4") ? all : undefined;
    });
    expect(textOf(messages.at(-1))).toContain("sdk-result");
    expect(runtimeCount(messages)).toBe(1);
    const view = await until(async () => {
      const seen = await inbox().getSession(sid);
      return seen.status === "idle" ? seen : undefined;
    });
    expect(view).toMatchObject({ inbox: { pending: 0, claimed: 0 }, resume: { attempts: 1 } });
    expect(await deliveries(sid)).toEqual([
      expect.objectContaining({ error: null, binding: "SHELL_AGENT_WAKE" }),
    ]);
  });

  it("with the agent's Worker down when the command ends, the wake is retried with the same resume_id and applied once it is back", async () => {
    const sid = `sdk-down-${Date.now()}`;
    await inbox().createSession({ id: sid, resume_binding: "SHELL_AGENT_WAKE" });
    await prompt(sid, "run: sleep 3; printf after-restart; exit 0");
    await workers.agent.stop();
    try {
      // The command ends while the agent is down: attempts fail, the session keeps resuming.
      await until(async () => ((await deliveries(sid)).length >= 2 ? true : undefined));
      expect((await deliveries(sid)).every((event) => event.error !== null)).toBe(true);
      expect((await inbox().getSession(sid)).status).toBe("resuming");
    } finally {
      await workers.agent.start();
    }
    const messages = await until(async () => {
      const all = await transcript(sid);
      return textOf(all.at(-1)).includes("exited with code 0") ? all : undefined;
    }, 90_000);
    expect(textOf(messages.at(-1))).toContain("after-restart");
    // The conversation from before the restart is there, and the result in it once.
    expect(textOf(messages[0])).toContain("run: sleep 3");
    expect(runtimeCount(messages)).toBe(1);
    const view = await until(async () => {
      const seen = await inbox().getSession(sid);
      return seen.status === "idle" ? seen : undefined;
    });
    const trail = await deliveries(sid);
    expect(new Set(trail.map((event) => event.resume_id))).toEqual(
      new Set([view.resume?.resume_id]),
    );
    expect(trail.at(-1)).toMatchObject({ error: null });
  }, 150_000);
});
