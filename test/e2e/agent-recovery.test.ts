// Recovery without re-running, with real processes: the example host (a process of its own) is
// SIGKILLed after the model's exec_command ran and before the turn was stored, then started again
// on the same store. Its command must have run exactly once, and the model's next turn reads it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type SessionRecord, SqliteConversationStore } from "@exec-inbox/ai-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNNER_TOKEN } from "../runner/runner-process";
import { viewWhen } from "../support/local-stack";
import { callRunner } from "../support/runner-client";
import {
  type AgentStack,
  assistantTexts,
  type HostProcess,
  LEASE_MS,
  startAgentStack,
  toolCalls,
  toolResults,
} from "./agent-stack";

let stack: AgentStack;

beforeAll(async () => {
  stack = await startAgentStack();
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

/** The runner's workspaces outlive the stack: a session id of its own keeps the count at zero. */
const unique = (name: string): string => `${name}-${Date.now().toString(36)}`;

/** The file each command appends a line to, in the session's workspace on the runner. */
const COUNT = "ran.count";

/** How many times the runner ran the session's command: the lines it appended to COUNT. */
async function runs(sid: string): Promise<number> {
  const answer = await callRunner(stack.runner.base, RUNNER_TOKEN, "/v1/exec_command", {
    cmd: `cat ${COUNT} 2>/dev/null || true`,
    workspace: sid,
    yield_time_ms: 5_000,
  });
  expect(answer.body).toMatchObject({ exit_code: 0 });
  return String(answer.body.output)
    .split("\n")
    .filter((line) => line === "ran").length;
}

async function recordWhen(
  host: HostProcess,
  sid: string,
  accept: (record: SessionRecord) => boolean,
): Promise<SessionRecord> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await fetch(`${host.base}/sessions/${sid}`);
    const record = (await response.json()) as SessionRecord;
    if (response.ok && accept(record)) return record;
    if (Date.now() > deadline) throw new Error(`${sid}: ${JSON.stringify(record).slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The prompts the scripted model was given in `sid`, by the process that gave them. */
function promptsOf(file: string, sid: string) {
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { pid: number; sessionId: string; prompt: any[] })
    .filter((entry) => entry.sessionId === sid);
}

/** The human's message starts a command; the host dies when the model is about to read its answer. */
async function killedAfterExecCommand(sid: string, line: string, promptLog: string) {
  // Prompt 1 makes the exec_command call; prompt 2 carries its result: the process dies there.
  const doomed = await stack.spawnHostProcess({
    AGENT_KILL_AT_PROMPT: "2",
    AGENT_PROMPT_LOG: promptLog,
  });
  expect((await doomed.post("/sessions", { id: sid })).status).toBe(201);
  await doomed.post(`/sessions/${sid}/messages`, { content: line }).catch(() => null);
  expect(await doomed.exited).toEqual({ code: null, signal: "SIGKILL" });
}

describe("a host killed between the model's exec_command and storing the turn", () => {
  it("gives a command that finished within its yield its result after the restart, and never runs it again", async () => {
    const sid = unique("recovery-finished-in-yield");
    const promptLog = join(stack.stateDir, `${sid}.prompts.jsonl`);
    // `wait:` gives it a 30 s yield: it ends within it however busy the machine.
    await killedAfterExecCommand(sid, `wait: echo ran >> ${COUNT}; printf quick-done`, promptLog);
    expect(await runs(sid)).toBe(1);

    const restarted = await stack.spawnHostProcess({ AGENT_PROMPT_LOG: promptLog });
    const record = await recordWhen(
      restarted,
      sid,
      (r) => r.activeRun === null && assistantTexts(r).length > 0,
    );
    await viewWhen(stack.dev.base, sid, (view) => view.status === "idle", LEASE_MS * 10);
    await restarted.kill();

    expect(await runs(sid)).toBe(1);
    expect(toolCalls(record)).toEqual([
      { toolName: "exec_command", input: expect.objectContaining({ cmd: expect.any(String) }) },
    ]);
    // The answer the runner gave, led by its outcome and told as recovered like every other.
    expect(toolResults(record)).toEqual([
      {
        toolName: "exec_command",
        value: expect.objectContaining({
          outcome: "exited with code 0",
          exit_code: 0,
          note: expect.stringContaining("not started again"),
        }),
      },
    ]);
    expect(assistantTexts(record)).toEqual(["Command exited with code 0: quick-done"]);
    expect(record.toolCalls).toEqual([]);
    // The restarted process's one prompt ends with the recovered call and its result.
    const prompts = promptsOf(promptLog, sid);
    const byRestarted = prompts.filter((entry) => entry.pid !== prompts[0]!.pid);
    expect(byRestarted).toHaveLength(1);
    expect(byRestarted[0]!.prompt.at(-1)).toMatchObject({ role: "tool" });
  });

  it("gives a background command its handle and truth after the restart, waits for it, and the model reads its end: it ran once", async () => {
    const sid = unique("recovery-background");
    const promptLog = join(stack.stateDir, `${sid}.prompts.jsonl`);
    await killedAfterExecCommand(
      sid,
      `run: echo ran >> ${COUNT}; sleep 2; printf recovered-bg`,
      promptLog,
    );
    const jobs = (await stack.inbox.listJobs(sid, {})).jobs;
    expect(jobs).toHaveLength(1);
    const handle = jobs[0]!.handle;

    const restarted = await stack.spawnHostProcess({ AGENT_PROMPT_LOG: promptLog });
    const record = await recordWhen(restarted, sid, (r) =>
      assistantTexts(r).some((text) => text.includes("recovered-bg")),
    );
    await viewWhen(stack.dev.base, sid, (view) => view.status === "idle", LEASE_MS * 10);
    await restarted.kill();

    expect(await runs(sid)).toBe(1);
    expect((await stack.inbox.listJobs(sid, {})).jobs).toHaveLength(1);
    expect(toolCalls(record).filter((call) => call.toolName === "exec_command")).toHaveLength(1);
    // The recovered result is the job's truth at that moment: still running, or its stored end.
    const recovered = toolResults(record).find((result) => result.toolName === "exec_command");
    expect(recovered?.value).toMatchObject({
      session_id: handle,
      note: expect.stringContaining("was not started again"),
    });
    expect(["running", "completed"]).toContain(recovered?.value.status);
    expect(assistantTexts(record).some((text) => text.includes(`${handle}`))).toBe(true);
  });
});

describe("a conversation compacted so that its tool calls lost their results", () => {
  it("gives each call a result from exec-inbox, stored right after it, and the next turn reads them: nothing runs again", async () => {
    const sid = unique("recovery-compacted");
    const agent = await stack.startHost();
    await agent.host.kit.createSession(sid);
    await agent.host.kit.sendUserMessage(
      sid,
      `run: echo ran >> ${COUNT}; sleep 30\nwait: printf quick`,
    );
    const before = (await agent.host.kit.conversation(sid))!;
    const handle = before.running[0]!;
    expect(toolResults(before)).toHaveLength(2);

    // The host's compaction drops the tool results and keeps the calls.
    const store = new SqliteConversationStore(join(stack.stateDir, "agent"));
    await store.save({
      ...before,
      messages: before.messages.filter((message) => message.role !== "tool"),
    });
    store.close();

    const recovered = await agent.host.kit.recoverToolCalls(sid);
    expect(recovered.map((call) => call.result)).toEqual([
      expect.objectContaining({ session_id: handle, status: "running" }),
      expect.objectContaining({ status: "unknown" }),
    ]);
    const after = (await agent.host.kit.conversation(sid))!;
    expect(toolCalls(after)).toEqual(toolCalls(before));
    const results = toolResults(after);
    expect(results).toHaveLength(2);
    for (const result of results) {
      expect(result.value.note).toContain("not started again");
    }
    // Each result follows the message that made the call.
    const callAt = after.messages.findIndex((message) => message.role === "assistant");
    expect(after.messages[callAt + 1]?.role).toBe("tool");
    expect(await agent.host.kit.recoverToolCalls(sid)).toEqual([]);

    expect(await agent.host.kit.sendUserMessage(sid, "and now?")).toBe("Noted: and now?");
    const prompt = agent.models.get(sid)!.doGenerateCalls.at(-1)!.prompt;
    expect(JSON.stringify(prompt.filter((message) => message.role === "tool"))).toContain(
      "not started again",
    );
    expect(await runs(sid)).toBe(1);
    await stack.inbox.cancelJob(sid, handle).catch(() => null);
    await agent.host.close();
  });
});
