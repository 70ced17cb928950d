// The Agents SDK kit end to end in the workers pool: the example ShellAgent (agents-sdk/example,
// bundled as a second Worker) driven by the AI SDK's mock language model, woken by exec-inbox
// through the SHELL_AGENT_WAKE service binding. A stand-in runner plays the process side.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

interface RunnerJob {
  handle: string;
  cmd: string;
  callback: { url: string; token: string } | null;
}
type Message = { role: string; content: unknown };

const agentGet = async <T>(sid: string, what: "transcript" | "prompts"): Promise<T> =>
  (await env.SHELL_AGENT_HTTP.fetch(`http://agent/agents/${sid}/${what}`)).json() as Promise<T>;
const transcript = async (sid: string) =>
  (await agentGet<{ messages: Message[] }>(sid, "transcript")).messages;
const prompts = async (sid: string) =>
  (await agentGet<{ prompts: Message[][] }>(sid, "prompts")).prompts;
const runnerJobs = async (sid: string): Promise<RunnerJob[]> =>
  (
    (await (await env.FAKE_RUNNER.fetch(`http://runner/_jobs?workspace=${sid}`)).json()) as {
      jobs: RunnerJob[];
    }
  ).jobs;

/** The text of every message, for counting what the model was shown. */
const textOf = (message: Message): string =>
  typeof message.content === "string" ? message.content : JSON.stringify(message.content);

/** A session woken through the agent's binding, whose agent started one background command. */
async function agentWaitingOnCommand(sid: string) {
  const created = await api.call("POST", "/v1/sessions", {
    body: { id: sid, resume_binding: "SHELL_AGENT_WAKE" },
  });
  expect(created.status).toBe(201);
  const answer = await env.SHELL_AGENT_HTTP.fetch(`http://agent/agents/${sid}/prompt`, {
    method: "POST",
    body: JSON.stringify({ text: "run: make test" }),
  });
  expect(answer.status).toBe(200);
  const [job] = await runnerJobs(sid);
  expect(job).toMatchObject({ cmd: "make test", callback: { token: expect.any(String) } });
  return { job: job!, answer: ((await answer.json()) as { answer: string }).answer };
}

describe("the Agents SDK kit", () => {
  it("a long command suspends the agent; its end wakes it once through the binding, and the model reads the result once and answers", async () => {
    const sid = api.uniqueId("sdk-loop");
    const { job, answer } = await agentWaitingOnCommand(sid);
    expect(answer).toContain(`Started command ${job.handle} in the background`);
    // Reserved and armed before the tool answered; the turn ended suspended on it.
    expect(await api.view(sid)).toMatchObject({
      status: "suspended",
      run: null,
      waiting_for_bash: { handles: [job.handle] },
      jobs: { running: 1 },
    });

    // The command exits: the runner posts its result with the callback token.
    await env.FAKE_RUNNER.fetch(`http://runner/_finish/${job.handle}`, {
      method: "POST",
      body: JSON.stringify({ exit_code: 0, output: "42 tests passed" }),
    });
    const completion = await api.complete(
      sid,
      job.handle,
      job.callback!.token,
      api.result(0, "42 tests passed"),
    );
    expect(completion.body).toMatchObject({ outcome: "accepted", disposition: "resume_scheduled" });

    await api.until(async () => {
      const messages = await transcript(sid);
      expect(textOf(messages.at(-1)!)).toContain("exited with code 0: 42 tests passed");
    }, 15_000);
    await api.until(async () => expect((await api.view(sid)).status).toBe("idle"));
    const view = await api.view(sid);
    expect(view).toMatchObject({
      inbox: { pending: 0, claimed: 0 },
      resume: { state: "completed", attempts: 1, reason: "background_exec_completed" },
      run: null,
      waiting_for_bash: null,
    });
    expect((await api.inboxCounts(sid)).acked).toBe(1);

    // The runtime message is in the conversation once, and each later prompt showed it once.
    const messages = await transcript(sid);
    const runtime = messages.filter((message) => textOf(message).includes("[runtime]"));
    expect(runtime).toHaveLength(1);
    expect(textOf(runtime[0]!)).toContain(`session_id="${job.handle}"`);
    const seen = await prompts(sid);
    const afterWake = seen.filter((prompt) => prompt.some((m) => textOf(m).includes("[runtime]")));
    expect(afterWake.length).toBeGreaterThan(0);
    for (const prompt of afterWake) {
      expect(prompt.filter((m) => textOf(m).includes("[runtime]"))).toHaveLength(1);
    }
    // The answer came from the result the model pulled with write_stdin.
    expect(textOf(messages.at(-1)!)).toContain("42 tests passed");
  }, 30_000);

  it("a replayed wake, and a duplicate result, change nothing: no new turn, no new message", async () => {
    const sid = api.uniqueId("sdk-replay");
    const { job } = await agentWaitingOnCommand(sid);
    await env.FAKE_RUNNER.fetch(`http://runner/_finish/${job.handle}`, {
      method: "POST",
      body: JSON.stringify({ exit_code: 3, output: "1 failed" }),
    });
    await api.complete(sid, job.handle, job.callback!.token, api.result(3, "1 failed"));
    await api.until(async () => expect((await api.view(sid)).status).toBe("idle"));
    await api.until(async () =>
      expect(textOf((await transcript(sid)).at(-1)!)).toContain("exited with code 3"),
    );
    const before = { messages: await transcript(sid), prompts: (await prompts(sid)).length };
    const view = await api.view(sid);

    // The same wake again, as a redelivery or a replay by anyone holding the binding would send it.
    const replayed = await env.SHELL_AGENT_WAKE.wake({
      type: "session.resume",
      tenant: "default",
      session_id: sid,
      lifetime: view.lifetime,
      resume_id: view.resume.resume_id,
      reason: "background_exec_completed",
      inbox: { pending: 1 },
    });
    expect(replayed).toEqual({ taken: false, reason: "duplicate" });
    const again = await api.complete(
      sid,
      job.handle,
      job.callback!.token,
      api.result(3, "1 failed"),
    );
    expect(again.body.outcome).toBe("duplicate");
    await api.sleep(1000);
    expect(await transcript(sid)).toEqual(before.messages);
    expect(await prompts(sid)).toHaveLength(before.prompts);
    expect(await api.view(sid)).toMatchObject({ status: "idle", run: null, resume: view.resume });
  }, 30_000);

  it("a wake for a resume the session no longer holds is inert: no run is registered", async () => {
    const sid = api.uniqueId("sdk-stale");
    await api.call("POST", "/v1/sessions", {
      body: { id: sid, resume_binding: "SHELL_AGENT_WAKE" },
    });
    const view = await api.view(sid);
    const stale = await env.SHELL_AGENT_WAKE.wake({
      type: "session.resume",
      tenant: "default",
      session_id: sid,
      lifetime: view.lifetime,
      resume_id: "rs_never_made",
      reason: "background_exec_completed",
      inbox: { pending: 0 },
    });
    expect(stale).toEqual({ taken: false, reason: "stale" });
    expect(await api.view(sid)).toMatchObject({ status: "idle", run: null });
    expect(await transcript(sid)).toEqual([]);
  });
});
