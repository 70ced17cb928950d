// A turn that ends waiting on a background command in a session nothing can wake: the model was
// told to check with write_stdin, and the host's log says in one line that nothing will resume the
// wait. The kit's turn loop (run-turns.ts) against a fake exec-inbox whose session view names the
// wake path; the suspend itself is the same either way.

import type { RunnerClient, SessionRecord } from "@exec-inbox/ai-sdk";
import { runTurns } from "@exec-inbox/ai-sdk/run-turns";
import type { ExecInboxClient } from "@exec-inbox/client";
import { describe, expect, it } from "vitest";

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

/** One turn that leaves h1 running, in a session woken `via` that path: the log and the suspends. */
async function turnLeavingH1(via: "webhook" | null) {
  const suspended: string[][] = [];
  const log: string[] = [];
  const inbox = {
    claim: async () => ({ claims: [] }),
    ack: async () => ({}),
    getSession: async () => ({ inbox: { claimed: 0 }, waiting_for_bash: null, wake: { via } }),
    suspend: async (_sid: string, _run: string, body: { waiting_for: string[] }) => {
      suspended.push(body.waiting_for);
      return {};
    },
    finishRun: async () => ({}),
  } as unknown as ExecInboxClient;
  await runTurns(
    {
      inbox,
      runner: {} as RunnerClient,
      store: {
        save: async () => {},
        load: async () => undefined,
        delete: async () => {},
        list: async () => [],
      },
      resumeSigningSecret: "unused",
      resumeUrl: "unused",
      turn: async ({ messages, tools }) => {
        tools.onBackground("h1");
        return { messages: [...messages, "started"], text: "started" };
      },
      log: (line) => log.push(line),
    },
    { ...record, activeRun: run },
    run,
    false,
  );
  return { suspended, log };
}

describe("a turn that ends waiting on a background command", () => {
  it("logs one line that nothing will resume the wait when the session has no wake path, and still suspends", async () => {
    const { suspended, log } = await turnLeavingH1(null);
    expect(suspended).toEqual([["h1"]]);
    const lines = log.filter((line) => line.includes("nothing will resume the wait"));
    expect(lines).toEqual([
      "session s1: nothing will resume the wait on h1: the session has no wake path (no resume URL, binding or default webhook), so the host must resume it",
    ]);
  });

  it("logs no such line when a result will wake the session", async () => {
    const { suspended, log } = await turnLeavingH1("webhook");
    expect(suspended).toEqual([["h1"]]);
    expect(log.some((line) => line.includes("nothing will resume"))).toBe(false);
  });
});
