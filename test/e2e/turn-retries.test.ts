// A model turn retried after its provider failed midway: the conversation of the failed attempt is
// dropped, but a command it left running in the background is still waited for. The kit's turn loop
// (run-turns.ts) against a recording fake exec-inbox; the engine is a test's own.

import type { RunnerClient, SessionRecord, TurnEngine } from "@exec-inbox/ai-sdk";
import { runTurns } from "@exec-inbox/ai-sdk/run-turns";
import type { ExecInboxClient } from "@exec-inbox/client";
import { describe, expect, it } from "vitest";

function fakeInbox() {
  const suspended: string[][] = [];
  let finished = 0;
  const inbox = {
    claim: async () => ({ claims: [] }),
    ack: async () => ({}),
    getSession: async () => ({ inbox: { claimed: 0 }, waiting_for_bash: null }),
    suspend: async (_sid: string, _run: string, body: { waiting_for: string[] }) => {
      suspended.push(body.waiting_for);
      return {};
    },
    finishRun: async () => {
      finished++;
      return {};
    },
  } as unknown as ExecInboxClient;
  return { inbox, suspended, finished: () => finished };
}

const record: SessionRecord<string> = {
  sessionId: "s1",
  lifetime: "lt",
  messages: [],
  running: [],
  applied: [],
  resumes: [],
  pendingResume: null,
  activeRun: null,
};
const run = { runId: "r1", resumeId: null, leaseExpiresAt: 0, pendingUserText: "go" };

async function turnsWith(engine: TurnEngine<string>, attempts: number) {
  const fake = fakeInbox();
  const saved: SessionRecord<string>[] = [];
  const answer = await runTurns(
    {
      inbox: fake.inbox,
      runner: {} as RunnerClient,
      store: {
        save: async (r) => {
          saved.push(r);
        },
        load: async () => undefined,
        delete: async () => {},
        list: async () => [],
      },
      resumeSigningSecret: "unused",
      resumeUrl: "unused",
      modelAttempts: attempts,
      turn: engine,
    },
    { ...record, activeRun: run },
    run,
    false,
  ).catch((error: unknown) => error);
  return { ...fake, saved, answer };
}

describe("a model turn retried after its provider failed midway", () => {
  it("still waits for the command the failed attempt started in the background", async () => {
    let attempt = 0;
    const { suspended, saved, finished } = await turnsWith(async ({ messages, tools }) => {
      attempt++;
      if (attempt === 1) {
        tools.onBackground("bg-from-the-failed-attempt");
        throw new Error("provider 500 after the tool ran");
      }
      return { messages: [...messages, "answered"], text: "answered" };
    }, 3);
    expect(attempt).toBe(2);
    expect(saved.at(-1)?.running).toEqual(["bg-from-the-failed-attempt"]);
    expect(suspended).toEqual([["bg-from-the-failed-attempt"]]);
    expect(finished()).toBe(0);
  });

  it("suspends on that command when every attempt fails, instead of finishing the run", async () => {
    const { suspended, finished, answer } = await turnsWith(async ({ tools }) => {
      tools.onBackground("bg-left-running");
      throw new Error("provider down");
    }, 2);
    expect(answer).toBeInstanceOf(Error);
    expect(suspended).toEqual([["bg-left-running"]]);
    expect(finished()).toBe(0);
  });

  it("does not wait for a command a failed attempt started and saw end", async () => {
    let attempt = 0;
    const { suspended, finished } = await turnsWith(async ({ messages, tools }) => {
      attempt++;
      if (attempt === 1) {
        tools.onBackground("bg-ended");
        tools.onEnded("bg-ended");
        throw new Error("provider 500");
      }
      return { messages: [...messages], text: "" };
    }, 3);
    expect(suspended).toEqual([]);
    expect(finished()).toBe(1);
  });
});
