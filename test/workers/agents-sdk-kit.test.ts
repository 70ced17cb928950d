// The Agents SDK kit end to end in the workers pool: the example ShellAgent (agents-sdk/example,
// bundled as a second Worker) driven by the AI SDK's mock language model, woken by exec-inbox
// through the SHELL_AGENT_WAKE service binding. A stand-in runner plays the process side.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { ACME_AGENT_TOKEN, AGENT_TOKEN, GLOBEX_AGENT_TOKEN } from "../support/secrets";

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

const promptAgent = async (sid: string, text: string) =>
  await env.SHELL_AGENT_HTTP.fetch(`http://agent/agents/${sid}/prompt`, {
    method: "POST",
    body: JSON.stringify({ text }),
  });

/** A session on the agent's binding whose agent has answered one human message. */
async function conversationWithHistory(sid: string) {
  const created = await api.call("POST", "/v1/sessions", {
    body: { id: sid, resume_binding: "SHELL_AGENT_WAKE" },
  });
  expect(created.status).toBe(201);
  expect((await promptAgent(sid, "hello, remember this")).status).toBe(200);
  const before = await transcript(sid);
  expect(before.length).toBeGreaterThan(0);
  return before;
}

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

  it("a wake naming another lifetime is refused by exec-inbox and leaves the conversation whole", async () => {
    const sid = api.uniqueId("sdk-old-lifetime");
    const before = await conversationWithHistory(sid);
    const answer = await env.SHELL_AGENT_WAKE.wake({
      type: "session.resume",
      tenant: "default",
      session_id: sid,
      lifetime: "lt_some_old_lifetime",
      resume_id: "rs_from_the_old_lifetime",
      reason: "background_exec_completed",
      inbox: { pending: 1 },
    });
    expect(answer).toEqual({ taken: false, reason: "stale" });
    expect(await transcript(sid)).toEqual(before);
  });

  it("a wake for another tenant's session of the same id is foreign: this tenant's conversation stays", async () => {
    const sid = api.uniqueId("sdk-xtenant");
    const before = await conversationWithHistory(sid);
    // Tenant acme has no allowlist of its own: it inherits RESUME_BINDING_ALLOWLIST, this binding.
    const acme = api.client(ACME_AGENT_TOKEN);
    await acme.createSession({ id: sid, resume_binding: "SHELL_AGENT_WAKE" });
    const job = await acme.reserveJob(sid, { handle: "hx", command: "true" });
    const { run_id } = await acme.registerRun(sid, {});
    await acme.suspend(sid, run_id, { waiting_for: ["hx"] });
    const done = await api.complete(sid, "hx", job.callback.token, api.result(0, "x"));
    expect(done.body).toMatchObject({ outcome: "accepted", disposition: "resume_scheduled" });
    await api.until(async () => {
      expect((await acme.getSession(sid)).resume?.state).toBe("delivered");
    }, 15_000);
    await api.sleep(500);
    expect(await transcript(sid)).toEqual(before);
    // Nobody took acme's resume: the kit answered it inert.
    expect(await acme.getSession(sid)).toMatchObject({ status: "resuming", run: null });
    const direct = await env.SHELL_AGENT_WAKE.wake({
      type: "session.resume",
      tenant: "acme",
      session_id: sid,
      lifetime: (await acme.getSession(sid)).lifetime,
      resume_id: "rs_acme",
      reason: "background_exec_completed",
      inbox: { pending: 1 },
    });
    expect(direct).toEqual({ taken: false, reason: "foreign" });
  }, 30_000);

  it("after a delete and a re-create, the human's turns of the new lifetime survive its first wake, and the old lifetime's are gone", async () => {
    const sid = api.uniqueId("sdk-relife");
    const create = async () =>
      expect(
        (
          await api.call("POST", "/v1/sessions", {
            body: { id: sid, resume_binding: "SHELL_AGENT_WAKE" },
          })
        ).status,
      ).toBe(201);
    await create();
    expect((await promptAgent(sid, "first life")).status).toBe(200);
    expect((await api.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    await create();
    expect((await promptAgent(sid, "second life\nrun: make test")).status).toBe(200);
    const job = (await runnerJobs(sid)).at(-1)!;
    await env.FAKE_RUNNER.fetch(`http://runner/_finish/${job.handle}`, {
      method: "POST",
      body: JSON.stringify({ exit_code: 0, output: "ok" }),
    });
    await api.complete(sid, job.handle, job.callback!.token, api.result(0, "ok"));
    await api.until(async () => expect((await api.view(sid)).status).toBe("idle"), 15_000);
    await api.until(async () =>
      expect(textOf((await transcript(sid)).at(-1)!)).toContain("exited with code 0"),
    );
    const texts = JSON.stringify(await transcript(sid));
    expect({ second: texts.includes("second life"), first: texts.includes("first life") }).toEqual({
      second: true,
      first: false,
    });
  }, 40_000);

  it("65 background commands (a wait takes at most 64) leave the session suspended, and the next prompt is answered", async () => {
    const sid = api.uniqueId("sdk-65");
    await api.call("POST", "/v1/sessions", {
      body: { id: sid, resume_binding: "SHELL_AGENT_WAKE" },
    });
    const lines = Array.from({ length: 65 }, (_, i) => `run: sleep ${i}`).join("\n");
    expect((await promptAgent(sid, lines)).status).toBe(200);
    const view = await api.view(sid);
    expect(view).toMatchObject({ status: "suspended", run: null, jobs: { running: 65 } });
    expect(view.waiting_for_bash?.handles).toHaveLength(64);
    expect((await promptAgent(sid, "are you there?")).status).toBe(200);
    expect(await api.view(sid)).toMatchObject({ run: null });
  }, 60_000);

  it("a model that keeps failing ends the run: the session is not wedged and the next prompt is answered", async () => {
    const sid = api.uniqueId("sdk-model-down");
    await api.call("POST", "/v1/sessions", {
      body: { id: sid, resume_binding: "SHELL_AGENT_WAKE" },
    });
    const failed = await promptAgent(sid, "fail: model");
    expect(failed.status).toBe(502);
    expect(await failed.text()).toContain("the model failed");
    expect(await api.view(sid)).toMatchObject({ status: "idle", run: null });
    const next = await promptAgent(sid, "are you there?");
    expect(next.status).toBe(200);
    expect(await api.view(sid)).toMatchObject({ status: "idle", run: null });
  }, 30_000);

  it("a turn that fails on exec-inbox keeps its stored run and is retried by the agent's scheduler until it ends", async () => {
    const sid = api.uniqueId("sdk-outage");
    await api.call("POST", "/v1/sessions", {
      body: { id: sid, resume_binding: "SHELL_AGENT_WAKE" },
    });
    // Every claim of the first pass fails (the client's own five tries, all 503).
    await env.SHELL_AGENT_HTTP.fetch(`http://agent/agents/${sid}/outage`, {
      method: "POST",
      body: JSON.stringify({ claims: 5 }),
    });
    const failed = await promptAgent(sid, "hello through an outage");
    expect(failed.status).toBe(502);
    expect((await api.view(sid)).run).not.toBeNull();
    // The scheduled retry drives the stored run: the human's turn is answered and the run ends.
    await api.until(
      async () => expect(await api.view(sid)).toMatchObject({ status: "idle", run: null }),
      20_000,
    );
    const messages = await transcript(sid);
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect((await promptAgent(sid, "are you there?")).status).toBe(200);
  }, 40_000);

  for (const [name, target, promised, front, token] of [
    ["its resume binding", { resume_binding: "SHELL_AGENT_WAKE" }, true, "default", AGENT_TOKEN],
    [
      "its own resume_url",
      { resume_url: "http://hooks.test/hooks/sdk-honest" },
      true,
      "default",
      AGENT_TOKEN,
    ],
    // globex has a default webhook of its own (vitest.config.ts); the default tenant has none.
    ["its tenant's default webhook", {}, true, "globex", GLOBEX_AGENT_TOKEN],
    ["no wake path", {}, false, "default", AGENT_TOKEN],
  ] as const) {
    it(`the model of a session with ${name} is promised a wake for its background command only if one will come`, async () => {
      const sid = api.uniqueId("sdk-honest");
      const created = await api.call("POST", "/v1/sessions", {
        token,
        body: { id: sid, ...target },
      });
      expect(created.status).toBe(201);
      const agent = front === "globex" ? env.SHELL_AGENT_GLOBEX_HTTP : env.SHELL_AGENT_HTTP;
      const answer = await agent.fetch(`http://agent/agents/${sid}/prompt`, {
        method: "POST",
        body: JSON.stringify({ text: "run: make test" }),
      });
      expect(answer.status).toBe(200);
      const messages = (
        (await (await agent.fetch(`http://agent/agents/${sid}/transcript`)).json()) as {
          messages: Message[];
        }
      ).messages;
      const results = messages.filter((message) => message.role === "tool");
      const note = textOf(results.at(-1)!);
      expect(note).toContain("exec_command");
      if (promised) {
        expect(note).toContain("You will get a runtime message when it ends");
        expect(note).not.toContain("Nothing will wake you");
      } else {
        expect(note).toContain("Nothing will wake you when it ends");
        expect(note).not.toContain("You will get a runtime message");
      }
      // The scripted model believes the note, no more.
      const said = ((await answer.json()) as { answer: string }).answer;
      expect(said).toContain(promised ? "I will read it when it ends" : "nothing will tell me");
    });
  }

  it("an object reset after its exec_command ran, before the turn was stored, gives the call exec-inbox's truth and never starts it again", async () => {
    const sid = api.uniqueId("sdk-recover");
    await api.call("POST", "/v1/sessions", {
      body: { id: sid, resume_binding: "SHELL_AGENT_WAKE" },
    });
    // The object is reset when the model is about to read the command's answer.
    const crashed = await promptAgent(sid, "run: make test\ncrash: after exec");
    expect(crashed.status).toBe(502);
    const [job] = await runnerJobs(sid);
    expect(job).toMatchObject({ cmd: "make test", callback: { token: expect.any(String) } });

    // The next request starts the object again; its stored run goes on, and the journaled call
    // gets its result from exec-inbox: still running, with its handle.
    await api.until(async () => {
      const messages = await transcript(sid);
      expect(textOf(messages.at(-1)!)).toContain(
        `Started command ${job!.handle} in the background`,
      );
    }, 15_000);
    await api.until(async () =>
      expect(await api.view(sid)).toMatchObject({
        status: "suspended",
        waiting_for_bash: { handles: [job!.handle] },
      }),
    );
    const recovered = (await transcript(sid)).filter((message) => message.role === "tool");
    expect(recovered).toHaveLength(1);
    expect(textOf(recovered[0]!)).toContain("was not started again");
    expect(textOf(recovered[0]!)).toContain('"status":"running"');

    // Its end wakes the agent, which reads it: the runner was asked to start it once.
    await env.FAKE_RUNNER.fetch(`http://runner/_finish/${job!.handle}`, {
      method: "POST",
      body: JSON.stringify({ exit_code: 0, output: "42 tests passed" }),
    });
    await api.complete(sid, job!.handle, job!.callback!.token, api.result(0, "42 tests passed"));
    await api.until(async () => {
      const messages = await transcript(sid);
      expect(textOf(messages.at(-1)!)).toContain("exited with code 0: 42 tests passed");
    }, 15_000);
    expect(await runnerJobs(sid)).toHaveLength(1);
    const calls = (await transcript(sid)).flatMap((message) =>
      message.role === "assistant" && Array.isArray(message.content)
        ? (message.content as Array<{ type: string; toolName?: string }>).filter(
            (part) => part.type === "tool-call" && part.toolName === "exec_command",
          )
        : [],
    );
    expect(calls).toHaveLength(1);
  }, 40_000);

  it("recoverToolCalls gives the calls a compaction left without results their job's truth, right after each call, and starts nothing", async () => {
    const sid = api.uniqueId("sdk-compacted");
    const { job } = await agentWaitingOnCommand(sid);
    const agentPost = (what: string) =>
      env.SHELL_AGENT_HTTP.fetch(`http://agent/agents/${sid}/${what}`, { method: "POST" });
    expect((await agentPost("compact")).status).toBe(200);
    expect((await transcript(sid)).filter((message) => message.role === "tool")).toEqual([]);

    const answer = await agentPost("recover");
    expect(await answer.json()).toEqual({ recovered: 1 });
    const messages = await transcript(sid);
    const callAt = messages.findIndex((message) => message.role === "assistant");
    const result = messages[callAt + 1]!;
    expect(result.role).toBe("tool");
    expect(textOf(result)).toContain(`"session_id":"${job.handle}"`);
    expect(textOf(result)).toContain('"status":"running"');
    expect(textOf(result)).toContain("not started again");
    // Nothing is open any more, and the runner was asked to start the command once.
    expect(await (await agentPost("recover")).json()).toEqual({ recovered: 0 });
    expect(await runnerJobs(sid)).toHaveLength(1);
  });
});
