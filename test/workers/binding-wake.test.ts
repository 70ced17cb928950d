// The Cloudflare-native wake (CONTRACT.md §9): a session with `resume_binding` is woken by calling
// `wake(resume)` on a service binding (the WAKE_AGENT worker of vitest.config.ts), under every rule
// of §6 the webhook keeps. The target is a real second Worker reached over Workers RPC.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { resumePayloadSchema } from "../../src/http/schemas/resume";
import * as api from "../support/api";
import { getPage, signedInCookie } from "../support/console";
import { GLOBEX_AGENT_TOKEN, OPERATOR_TOKEN } from "../support/secrets";
import type { WakeOutcome } from "../support/wake-target.mjs";

const CLAIM_TIMEOUT_MS = 600_000; // the default RESUME_CLAIM_TIMEOUT_MS

afterEach(() => {
  vi.useRealTimers();
});

const wakes = async (sid: string) => await env.WAKE_AGENT.calls(sid);
const events = async (sid: string) =>
  (
    await api.call("GET", `/v1/ops/sessions/default/${sid}/events?limit=500`, {
      token: OPERATOR_TOKEN,
    })
  ).body.events as Array<Record<string, unknown>>;

/** A session with resume_binding, suspended on h1, then h1's result: one wake is owed. */
async function wokenThroughBinding(sid: string, outcomes: WakeOutcome[] = []) {
  await env.WAKE_AGENT.script(sid, outcomes);
  const created = await api.call("POST", "/v1/sessions", {
    body: { id: sid, resume_binding: "WAKE_AGENT" },
  });
  expect(created.status).toBe(201);
  const job = await api.reserve(sid, "h1");
  const runId = await api.registerRun(sid);
  expect((await api.suspend(sid, runId, ["h1"])).status).toBe(200);
  const answer = await api.complete(sid, "h1", job.callback.token, api.result(0, "x"));
  expect(answer.body).toMatchObject({ outcome: "accepted", disposition: "resume_scheduled" });
  return { created: created.body, token: job.callback.token };
}

describe("a wake through a service binding", () => {
  it("calls wake() once with the webhook's body, and never POSTs a webhook", async () => {
    const sid = api.uniqueId("bind-once");
    const { created, token } = await wokenThroughBinding(sid);
    expect(created).toMatchObject({ resume_binding: "WAKE_AGENT", resume_url: null });
    await api.until(async () => expect(await wakes(sid)).toHaveLength(1));
    const view = await api.view(sid);
    expect(view.resume).toMatchObject({ state: "delivered", attempts: 1, last_error: null });
    const [call] = await wakes(sid);
    expect(resumePayloadSchema.parse(call!.resume)).toEqual({
      type: "session.resume",
      tenant: "default",
      session_id: sid,
      lifetime: created.lifetime,
      resume_id: view.resume.resume_id,
      reason: "background_exec_completed",
      inbox: { pending: 1 },
    });
    // The same result again, and alarms run by hand, wake nothing more.
    const again = await api.complete(sid, "h1", token, api.result(0, "x"));
    expect(again.body.outcome).toBe("duplicate");
    for (let i = 0; i < 3; i += 1) await api.fireAlarm(sid);
    await api.sleep(500);
    expect(await wakes(sid)).toHaveLength(1);
    expect(await api.deliveries(sid)).toEqual([]);
    const trail = (await events(sid)).filter((event) => event.type === "delivery");
    expect(trail).toEqual([
      expect.objectContaining({
        resume_id: view.resume.resume_id,
        attempt: 1,
        status: null,
        error: null,
        binding: "WAKE_AGENT",
      }),
    ]);
  });

  it("a wake() that throws is retried with the same resume_id, after a backoff from the failed call", async () => {
    const sid = api.uniqueId("bind-retry");
    await wokenThroughBinding(sid, ["throw", "throw"]);
    await api.until(async () => expect(await wakes(sid)).toHaveLength(3));
    const calls = await wakes(sid);
    expect(new Set(calls.map((call) => call.resume.resume_id)).size).toBe(1);
    const gaps = [
      calls[1]!.received_at - calls[0]!.received_at,
      calls[2]!.received_at - calls[1]!.received_at,
    ];
    // Each retry waits at least the 1 s minimum backoff after the failed call (jitter makes the
    // second backoff 1–2 s, so it need not be longer than the first as measured here).
    expect(gaps[0]).toBeGreaterThanOrEqual(900);
    expect(gaps[1]).toBeGreaterThanOrEqual(900);
    await api.until(async () =>
      expect((await api.view(sid)).resume).toMatchObject({
        state: "delivered",
        attempts: 3,
        last_error: null,
      }),
    );
    const trail = (await events(sid)).filter((event) => event.type === "delivery");
    expect(trail.map((event) => [event.attempt, event.status, event.error])).toEqual([
      [1, null, "wake() on WAKE_AGENT threw (scripted agent failure)"],
      [2, null, "wake() on WAKE_AGENT threw (scripted agent failure)"],
      [3, null, null],
    ]);
  });

  it("after RESUME_MAX_ATTEMPTS failed wakes the resume is failed, the session idle, the inbox intact; the next wake is new", async () => {
    const sid = api.uniqueId("bind-give-up");
    const { created } = await wokenThroughBinding(sid, ["throw", "throw", "throw", "throw"]);
    // RESUME_MAX_ATTEMPTS is 4 in the test configuration: backoff 1 s, 2 s, 4 s.
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("failed"), 20_000);
    const failed = await api.view(sid);
    expect(failed).toMatchObject({
      status: "idle",
      lifetime: created.lifetime,
      inbox: { pending: 1 },
      resume: {
        attempts: 4,
        last_error: "wake() on WAKE_AGENT threw (scripted agent failure)",
      },
    });
    expect(await wakes(sid)).toHaveLength(4);

    const next = await api.reserve(sid, "h2");
    const answer = await api.complete(sid, "h2", next.callback.token, api.result(0, "y"));
    expect(answer.body.disposition).toBe("resume_scheduled");
    await api.until(async () => expect(await wakes(sid)).toHaveLength(5));
    const fifth = (await wakes(sid))[4]!.resume;
    expect(fifth.resume_id).not.toBe(failed.resume.resume_id);
    expect(fifth.inbox.pending).toBe(2);
  }, 30_000);

  it("a wake() that does not settle within the 10 s deadline is a failed attempt, retried with the same resume_id", async () => {
    const sid = api.uniqueId("bind-hang");
    await wokenThroughBinding(sid, ["hang"]);
    await api.until(async () => expect(await wakes(sid)).toHaveLength(2), 25_000);
    const calls = await wakes(sid);
    expect(calls[1]!.resume.resume_id).toBe(calls[0]!.resume.resume_id);
    // The pause counts from the end of the attempt that hung, not from its start.
    expect(calls[1]!.received_at - calls[0]!.received_at).toBeGreaterThanOrEqual(10_900);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const trail = (await events(sid)).filter((event) => event.type === "delivery");
    expect(trail.map((event) => event.error)).toEqual([
      "wake() on WAKE_AGENT timed out after 10 s",
      null,
    ]);
  }, 40_000);

  it("a delivered wake that no run takes within the claim timeout is delivered again with the same resume_id", async () => {
    const sid = api.uniqueId("bind-claim-timeout");
    await wokenThroughBinding(sid);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const first = (await wakes(sid))[0]!.resume;
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + CLAIM_TIMEOUT_MS + 1_000);
    await api.fireAlarm(sid);
    await api.until(async () => expect(await wakes(sid)).toHaveLength(2));
    expect((await wakes(sid))[1]!.resume.resume_id).toBe(first.resume_id);
    expect((await api.view(sid)).resume).toMatchObject({ state: "delivered", attempts: 2 });
  });

  it("an operator's redeliver of a failed wake calls wake() again with a new resume_id", async () => {
    const sid = api.uniqueId("bind-redeliver");
    await wokenThroughBinding(sid, ["throw", "throw", "throw", "throw"]);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("failed"), 20_000);
    const failed = (await api.view(sid)).resume.resume_id;
    const answer = await api.call("POST", `/v1/ops/sessions/default/${sid}/redeliver`, {
      token: OPERATOR_TOKEN,
    });
    expect(answer.status).toBe(200);
    await api.until(async () => expect(await wakes(sid)).toHaveLength(5));
    const fifth = (await wakes(sid))[4]!.resume;
    expect(fifth.resume_id).not.toBe(failed);
    expect(fifth.resume_id).toBe(answer.body.resume_id);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
  }, 30_000);

  it("a run that registers for the resume takes it: wake() is not called again", async () => {
    const sid = api.uniqueId("bind-taken");
    await wokenThroughBinding(sid, ["throw"]);
    await api.until(async () => expect(await wakes(sid)).toHaveLength(1));
    const resumeId = (await api.view(sid)).resume.resume_id;
    await api.registerRun(sid, { resume_id: resumeId });
    expect((await api.view(sid)).resume).toMatchObject({ resume_id: resumeId, state: "completed" });
    await api.fireAlarm(sid);
    await api.sleep(1500);
    expect(await wakes(sid)).toHaveLength(1);
  });
});

describe("naming a binding", () => {
  it("a binding the deployment does not allow, or cannot wake, is refused with 422 and creates nothing", async () => {
    const refused: Array<[Record<string, unknown>, string]> = [
      [
        { resume_binding: "SESSIONS" },
        "resume_binding SESSIONS is not in RESUME_BINDING_ALLOWLIST",
      ],
      [
        { resume_binding: "AGENT_HOST" },
        "resume_binding AGENT_HOST is not in RESUME_BINDING_ALLOWLIST",
      ],
      [{ resume_binding: "constructor" }, "is not in RESUME_BINDING_ALLOWLIST"],
      [{ resume_binding: "wake-agent" }, "is not a binding name"],
      [{ resume_binding: "" }, "is not a binding name"],
      [{ resume_binding: "NOT_BOUND" }, "binds no service with wake() by that name"],
      [
        { resume_binding: "WAKE_AGENT", resume_url: api.hookUrl("both") },
        "name resume_url or resume_binding, not both",
      ],
      [{ resume_binding: 7 }, ""],
      [{ resume_binding: "A".repeat(65) }, ""],
    ];
    for (const [extra, detail] of refused) {
      const sid = api.uniqueId("bind-refused");
      const answer = await api.call("POST", "/v1/sessions", { body: { id: sid, ...extra } });
      expect([extra, answer.status, answer.headers.get("content-type"), answer.body.code]).toEqual([
        extra,
        422,
        "application/problem+json",
        "invalid_request",
      ]);
      expect(answer.body.detail).toContain(detail);
      expect((await api.call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
    }
  });

  it("a tenant whose own binding allowlist is empty may not name a binding the deployment allows", async () => {
    const sid = api.uniqueId("bind-globex");
    const answer = await api.call("POST", "/v1/sessions", {
      body: { id: sid, resume_binding: "WAKE_AGENT" },
      token: GLOBEX_AGENT_TOKEN,
    });
    expect([answer.status, answer.body.code]).toEqual([422, "invalid_request"]);
    expect(answer.body.detail).toContain("not in RESUME_BINDING_ALLOWLIST");
    const read = await api.call("GET", `/v1/sessions/${sid}`, { token: GLOBEX_AGENT_TOKEN });
    expect(read.status).toBe(404);
  });

  it("the console shows the binding a session is woken through, and each wake in its trail", async () => {
    const sid = api.uniqueId("bind-console");
    await wokenThroughBinding(sid);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const cookie = await signedInCookie("192.0.2.26");
    const page = await getPage(`/console/sessions/default/${sid}`, cookie);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Resume binding");
    expect(html).toContain("WAKE_AGENT (wake() through a service binding)");
    expect(html).toContain("binding=WAKE_AGENT");
    expect(html).not.toContain("Resume URL");
  });

  it("a wake that outlives its lifetime is not recorded in the next lifetime's trail", async () => {
    const sid = api.uniqueId("bw-relife");
    await wokenThroughBinding(sid, ["hang"]);
    await api.until(async () => expect(await wakes(sid)).toHaveLength(1));
    const old = (await wakes(sid))[0]!.resume.resume_id;
    expect((await api.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect(
      (
        await api.call("POST", "/v1/sessions", {
          body: { id: sid, resume_binding: "WAKE_AGENT" },
        })
      ).status,
    ).toBe(201);
    // The hanging wake fails at its 10 s deadline, after the session was created again.
    await api.sleep(11_000);
    const trail = await events(sid);
    expect(trail.filter((e) => e.type === "delivery" && e.resume_id === old)).toEqual([]);
    expect(await api.view(sid)).toMatchObject({ status: "idle", resume: null });
  }, 30_000);

  it("a wake() whose return value Workers RPC cannot serialize is a failed attempt, retried with the same resume_id", async () => {
    const sid = api.uniqueId("bw-unserializable");
    await wokenThroughBinding(sid, ["unserializable"]);
    await api.until(async () => expect(await wakes(sid)).toHaveLength(2), 10_000);
    const calls = await wakes(sid);
    expect(calls[1]!.resume.resume_id).toBe(calls[0]!.resume.resume_id);
    const trail = (await events(sid)).filter((e) => e.type === "delivery");
    expect(trail.find((e) => e.attempt === 1)).toMatchObject({ error: expect.any(String) });
  }, 20_000);
});
