// The Cloudflare-native wake end to end under `wrangler dev`: exec-inbox and a small agent Worker
// in two processes, joined by service bindings both ways. The agent takes each wake as a host does
// (registers a run for the resume, claims, acks, finishes) through its own binding back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendJson } from "../support/http-json";
import { AGENT_TOKEN, devVar } from "../support/local-stack";
import { startTwoWorkers, type TwoWorkers } from "../support/two-workers";

let workers: TwoWorkers;

beforeAll(async () => {
  workers = await startTwoWorkers();
}, 120_000);

afterAll(async () => {
  await workers?.close();
});

const api = (method: string, path: string, body?: unknown, token = AGENT_TOKEN) =>
  sendJson<any>(fetch, `${workers.execInbox.base}${path}`, method, { body, token });

interface Wake {
  resume: { session_id: string; resume_id: string; lifetime: string; inbox: { pending: number } };
  taken: boolean;
  envelopes?: string[];
}
const wakesOf = async (sid: string): Promise<Wake[]> => {
  const answer = await fetch(`${workers.agent.base}/_wakes`);
  const { wakes } = (await answer.json()) as { wakes: Wake[] };
  return wakes.filter((wake) => wake.resume.session_id === sid);
};
const deliveries = async (sid: string) =>
  (
    await api(
      "GET",
      `/v1/ops/sessions/default/${sid}/events?limit=500`,
      undefined,
      devVar("OPERATOR_TOKENS"),
    )
  ).body.events.filter((event: { type: string }) => event.type === "delivery");

const until = async (check: () => Promise<boolean>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

/** A session named by `sid` that is woken through WAKE_AGENT, suspended on h1: h1's token. */
async function suspendedThroughBinding(sid: string): Promise<string> {
  const created = await api("POST", "/v1/sessions", { id: sid, resume_binding: "WAKE_AGENT" });
  expect([created.status, created.body.resume_binding]).toEqual([201, "WAKE_AGENT"]);
  const job = await api("POST", `/v1/sessions/${sid}/exec-jobs`, { handle: "h1", command: "make" });
  const run = await api("POST", `/v1/sessions/${sid}/runs`, {});
  const suspended = await api("POST", `/v1/sessions/${sid}/runs/${run.body.run_id}/suspend`, {
    waiting_for: ["h1"],
  });
  expect(suspended.status).toBe(200);
  return job.body.callback.token;
}

const complete = (sid: string, token: string) =>
  api(
    "POST",
    `/v1/sessions/${sid}/exec-jobs/h1/completion`,
    { status: "completed", exit_code: 0, output: "built" },
    token,
  );

describe("a wake through a service binding under wrangler dev", () => {
  it("a completion wakes the agent Worker once, and the agent takes the wake over its own binding", async () => {
    const sid = `bind-e2e-${Date.now()}`;
    const token = await suspendedThroughBinding(sid);
    expect((await complete(sid, token)).body.disposition).toBe("resume_scheduled");
    await until(async () => (await api("GET", `/v1/sessions/${sid}`)).body.status === "idle");
    const view = (await api("GET", `/v1/sessions/${sid}`)).body;
    expect(view).toMatchObject({
      inbox: { pending: 0, claimed: 0 },
      resume: { state: "completed", attempts: 1 },
    });
    const wakes = await wakesOf(sid);
    expect(wakes).toEqual([
      expect.objectContaining({
        taken: true,
        envelopes: [expect.any(String)],
        resume: expect.objectContaining({
          resume_id: view.resume.resume_id,
          inbox: { pending: 1 },
        }),
      }),
    ]);
    // The same result again wakes nothing.
    expect((await complete(sid, token)).body.outcome).toBe("duplicate");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await wakesOf(sid)).toHaveLength(1);
    expect(await deliveries(sid)).toEqual([
      expect.objectContaining({ attempt: 1, status: null, error: null, binding: "WAKE_AGENT" }),
    ]);
  });

  it("with the agent Worker down the wake is retried with the same resume_id and taken once it is back", async () => {
    const sid = `bind-down-${Date.now()}`;
    const token = await suspendedThroughBinding(sid);
    await workers.agent.stop();
    try {
      expect((await complete(sid, token)).body.disposition).toBe("resume_scheduled");
      // Attempts 1 and 2 (1 s apart) find no agent.
      await until(async () => (await deliveries(sid)).length >= 2);
      const failed = await deliveries(sid);
      expect(failed.every((event: { error: string | null }) => event.error !== null)).toBe(true);
      expect((await api("GET", `/v1/sessions/${sid}`)).body.status).toBe("resuming");
    } finally {
      await workers.agent.start();
    }
    await until(
      async () => (await api("GET", `/v1/sessions/${sid}`)).body.status === "idle",
      60_000,
    );
    const view = (await api("GET", `/v1/sessions/${sid}`)).body;
    expect(view).toMatchObject({ inbox: { pending: 0 }, resume: { state: "completed" } });
    const wakes = await wakesOf(sid);
    expect(wakes.map((wake) => [wake.resume.resume_id, wake.taken])).toEqual([
      [view.resume.resume_id, true],
    ]);
    const trail = await deliveries(sid);
    expect(new Set(trail.map((event: { resume_id: string }) => event.resume_id))).toEqual(
      new Set([view.resume.resume_id]),
    );
    expect(trail.at(-1)).toMatchObject({ error: null, binding: "WAKE_AGENT" });
  }, 120_000);

  it("a re-created session refuses the old lifetime's result, and its agent is not woken", async () => {
    const sid = `bind-recreated-${Date.now()}`;
    const token = await suspendedThroughBinding(sid);
    expect((await api("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    const again = await api("POST", "/v1/sessions", { id: sid, resume_binding: "WAKE_AGENT" });
    expect(again.status).toBe(201);
    const refused = await complete(sid, token);
    expect([refused.status, refused.body.code]).toEqual([410, "lifetime_ended"]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await wakesOf(sid)).toEqual([]);
    expect((await api("GET", `/v1/sessions/${sid}`)).body).toMatchObject({
      status: "idle",
      resume: null,
      inbox: { pending: 0 },
    });
  });
});
