// Per-tenant quotas and the rate limit: each quota's 429 with Retry-After and a
// stable code, a refusal that changes nothing, and nothing already accepted refused for it. The
// `quota` tenant's quotas are small (vitest.config.ts): 3 sessions, 2 running jobs, 4096 bytes of
// messages, 8192 bytes of full-output parts, 3 long-polls per session and 5 per tenant.

import { listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { tenantSessionStub } from "../../src/http/context";
import * as api from "../support/api";
import { bytesOf, upload } from "../support/full-output";
import { OPERATOR_TOKEN, QUOTA_AGENT_TOKEN, RATE_AGENT_TOKEN } from "../support/secrets";

const as = (token: string) => ({
  call: (method: string, path: string, body?: unknown) =>
    api.call(method, path, { token, ...(body === undefined ? {} : { body }) }),
});
const quota = as(QUOTA_AGENT_TOKEN);

/** Every session a test made, deleted after it: the tenant's 3 places are shared by the file. */
const made: string[] = [];
afterEach(async () => {
  for (const sid of made.splice(0)) await quota.call("DELETE", `/v1/sessions/${sid}`);
});

async function session(prefix: string): Promise<string> {
  const sid = api.uniqueId(prefix);
  const created = await quota.call("POST", "/v1/sessions", { id: sid });
  expect(created.status).toBe(201);
  made.push(sid);
  return sid;
}

function expectTooMany(answer: api.Answer, code: string, retryAfter: string): void {
  expect(answer.status).toBe(429);
  expect(answer.headers.get("content-type")).toBe("application/problem+json");
  expect(answer.headers.get("retry-after")).toBe(retryAfter);
  expect(answer.body).toMatchObject({ status: 429, code, title: expect.any(String) });
  expect(answer.body.detail).toEqual(expect.any(String));
}

const tenantPlaces = async (tenant: string) =>
  (
    await env.INDEX.prepare("SELECT COUNT(*) AS n FROM tenant_sessions WHERE tenant = ?1")
      .bind(tenant)
      .first<{ n: number }>()
  )?.n;

describe("the sessions quota", () => {
  it("a tenant at its sessions quota gets 429 quota_exceeded for a new id, and the refused id does not exist", async () => {
    const [first] = [await session("q-s1"), await session("q-s2"), await session("q-s3")];
    const refusedId = api.uniqueId("q-s4");
    const refused = await quota.call("POST", "/v1/sessions", { id: refusedId });
    expectTooMany(refused, "quota_exceeded", "5");
    expect(refused.body.detail).toContain("(sessions)");
    expect((await quota.call("GET", `/v1/sessions/${refusedId}`)).status).toBe(404);
    expect(await tenantPlaces("quota")).toBe(3);
    // An id the tenant holds is answered as ever: it exists.
    const again = await quota.call("POST", "/v1/sessions", { id: first });
    expect([again.status, again.body.code]).toEqual([409, "session_exists"]);
    // Another tenant's quota is its own.
    expect((await api.createSession(api.uniqueId("q-other"))).tenant).toBe("default");
    // A delete gives the place back.
    expect((await quota.call("DELETE", `/v1/sessions/${made.shift()}`)).status).toBe(204);
    expect(await tenantPlaces("quota")).toBe(2);
    expect((await quota.call("POST", "/v1/sessions", { id: refusedId })).status).toBe(201);
    made.push(refusedId);
  });

  it("an operator's delete gives the place back too", async () => {
    await session("q-o1");
    await session("q-o2");
    const third = await session("q-o3");
    const deleted = await api.call("DELETE", `/v1/ops/sessions/quota/${third}`, {
      token: "test-operator-token",
    });
    expect(deleted.status).toBe(204);
    made.pop();
    expect(await tenantPlaces("quota")).toBe(2);
    expect((await quota.call("POST", "/v1/sessions", { id: third })).status).toBe(201);
    made.push(third);
  });

  it("a create of an id that exists but was never counted, at a full tenant, gets 409 session_exists, not 429", async () => {
    const legacy = api.uniqueId("q-legacy");
    // A session the count never saw (made before tenant_sessions existed): its place taken away.
    const direct = await tenantSessionStub(env, "quota", legacy).create({
      tenant: "quota",
      id: legacy,
      resumeUrl: null,
      metadata: {},
    });
    expect(direct.ok).toBe(true);
    made.push(legacy);
    await env.INDEX.prepare(
      "DELETE FROM tenant_sessions WHERE tenant = 'quota' AND session_id = ?1",
    )
      .bind(legacy)
      .run();
    await session("q-l1");
    await session("q-l2");
    await session("q-l3");
    const again = await quota.call("POST", "/v1/sessions", { id: legacy });
    expect([again.status, again.body.code]).toEqual([409, "session_exists"]);
    // A new id at the full tenant is still refused.
    const refused = await quota.call("POST", "/v1/sessions", { id: api.uniqueId("q-l4") });
    expectTooMany(refused, "quota_exceeded", "5");
  });
});

describe("the sessions quota under a create and a delete of the same id at once", () => {
  it("a delete that finds no session frees no place: the live sessions never pass the quota, and the count is the live sessions", async () => {
    // The attack: 40 ids, each created and deleted in the same instant, so a delete can reach the
    // object before the create it races and answer 404.
    const ids = Array.from({ length: 40 }, (_, n) => api.uniqueId(`q-race-${n}`));
    const answers = await Promise.all(
      ids.map((sid) =>
        Promise.all([
          quota.call("POST", "/v1/sessions", { id: sid }),
          quota.call("DELETE", `/v1/sessions/${sid}`),
        ]),
      ),
    );
    for (const [created, deleted] of answers) {
      expect([201, 429]).toContain(created.status);
      expect([204, 404]).toContain(deleted.status);
    }
    const live: string[] = [];
    for (const sid of ids) {
      if ((await quota.call("GET", `/v1/sessions/${sid}`)).status === 200) live.push(sid);
    }
    // The operator's delete reaches every object, counted or not, so the file's tenant ends empty.
    const cleanUp = async () => {
      for (const sid of live) {
        await api.call("DELETE", `/v1/ops/sessions/quota/${sid}`, { token: OPERATOR_TOKEN });
      }
    };
    try {
      expect({ live: live.length, counted: await tenantPlaces("quota") }).toEqual({
        live: Math.min(live.length, 3),
        counted: live.length,
      });
    } finally {
      await cleanUp();
    }
    expect(await tenantPlaces("quota")).toBe(0);
  }, 30_000);
});

describe("the running-jobs quota", () => {
  it("refuses a new reservation past it, answers a repeated one, and still takes every heartbeat and completion", async () => {
    const sid = await session("q-jobs");
    const base = `/v1/sessions/${sid}/exec-jobs`;
    const h1 = await quota.call("POST", base, { handle: "h1", command: "sleep 1" });
    const h2 = await quota.call("POST", base, { handle: "h2", command: "sleep 2" });
    expect([h1.status, h2.status]).toEqual([201, 201]);
    const h3 = await quota.call("POST", base, { handle: "h3", command: "sleep 3" });
    expectTooMany(h3, "quota_exceeded", "5");
    expect(h3.body.detail).toContain("(running_jobs)");
    expect((await quota.call("GET", `${base}/h3`)).status).toBe(404);
    expect((await quota.call("GET", `/v1/sessions/${sid}`)).body.jobs).toEqual({
      running: 2,
      done: 0,
    });
    // The same reservation again is one reservation, not a new job.
    const repeated = await quota.call("POST", base, { handle: "h1", command: "sleep 1" });
    expect(repeated.status).toBe(200);
    expect(repeated.body.callback.token).toBe(h1.body.callback.token);
    const token = h1.body.callback.token;
    const beat = await api.call("POST", `${base}/h1/heartbeat`, { token, body: {} });
    expect(beat.status).toBe(200);
    const done = await api.complete(sid, "h1", token, api.result(0, "ok"));
    expect([done.status, done.body.outcome]).toEqual([202, "accepted"]);
    // A result frees a place.
    expect((await quota.call("POST", base, { handle: "h3", command: "sleep 3" })).status).toBe(201);
  });
});

describe("the message-bytes quota", () => {
  it("refuses a message that would pass it with 429, and stores nothing of it", async () => {
    const sid = await session("q-bytes");
    const text = "x".repeat(1500);
    const path = `/v1/sessions/${sid}/messages`;
    expect((await quota.call("POST", path, { role: "user", content: text })).status).toBe(201);
    expect((await quota.call("POST", path, { role: "user", content: text })).status).toBe(201);
    const refused = await quota.call("POST", path, { role: "user", content: text });
    expectTooMany(refused, "quota_exceeded", "5");
    expect(refused.body.detail).toContain("(message_bytes)");
    const listed = await quota.call("GET", path);
    expect(listed.body.messages.map((m: { index: number }) => m.index)).toEqual([0, 1]);
    expect((await quota.call("GET", `/v1/sessions/${sid}`)).body.message_count).toBe(2);
    // What still fits is taken.
    expect((await quota.call("POST", path, { role: "user", content: "short" })).status).toBe(201);
  });
});

describe("the full-output bytes quota", () => {
  it("a tenant's own full_output_bytes holds across the session's jobs, finished ones included: 413, nothing stored", async () => {
    const sid = await session("q-full");
    const base = `/v1/sessions/${sid}/exec-jobs`;
    const h1 = (await quota.call("POST", base, { handle: "h1", command: "a" })).body.callback;
    const h2 = (await quota.call("POST", base, { handle: "h2", command: "b" })).body.callback;
    expect((await upload(sid, "h1", h1.token, 0, bytesOf(3000, 1))).status).toBe(201);
    expect((await upload(sid, "h1", h1.token, 1, bytesOf(3000, 2))).status).toBe(201);
    // A finished job's parts stay until its purge: they still count.
    expect((await api.complete(sid, "h1", h1.token, api.result(0, "out"))).status).toBe(202);
    expect((await upload(sid, "h2", h2.token, 0, bytesOf(2000, 3))).status).toBe(201);
    const refused = await upload(sid, "h2", h2.token, 1, bytesOf(1000, 4));
    expect([refused.status, refused.body.code]).toEqual([413, "payload_too_large"]);
    expect(refused.body.detail).toContain("(full_output_bytes)");
    const stored = await env.OUTPUTS.list({ prefix: `outputs/quota/${sid}/` });
    expect(stored.objects.map((object) => object.size).sort()).toEqual([2000, 3000, 3000]);
    // What still fits (8192 − 8000 bytes) is taken.
    expect((await upload(sid, "h2", h2.token, 1, bytesOf(192, 5))).status).toBe(201);
  });
});

/** Starts a long-poll that will wait `ms`, and answers when it ends. */
const longPoll = (sid: string, runId: string, ms = 3_000) =>
  quota.call("GET", `/v1/sessions/${sid}/runs/${runId}/notifications?after=0&wait_ms=${ms}`);

async function withRun(prefix: string): Promise<{ sid: string; runId: string }> {
  const sid = await session(prefix);
  const run = await quota.call("POST", `/v1/sessions/${sid}/runs`, {});
  expect(run.status).toBe(201);
  return { sid, runId: run.body.run_id };
}

/** Until the session object holds `count` open polls (each request is on its way in). */
const settle = () => api.sleep(300);

describe("the long-poll quotas", () => {
  it("many parallel long-polls on one session: the 4th gets 429 too_many_long_polls, the rest answer, the service stays up", async () => {
    const { sid, runId } = await withRun("q-poll");
    const open = [longPoll(sid, runId), longPoll(sid, runId), longPoll(sid, runId)];
    await settle();
    const fourth = await longPoll(sid, runId);
    expectTooMany(fourth, "too_many_long_polls", "1");
    expect(fourth.body.detail).toContain("long_polls_per_session");
    // A poll that does not wait is a read, never counted.
    expect((await longPoll(sid, runId, 0)).status).toBe(200);
    expect((await api.call("GET", "/healthz", { token: null })).status).toBe(200);
    expect((await Promise.all(open)).map((answer) => answer.status)).toEqual([200, 200, 200]);
    // Once they ended, the session takes long-polls again.
    expect((await longPoll(sid, runId, 100)).status).toBe(200);
  });

  it("a tenant's long-polls across its sessions stop at its quota (5 here) with 429, and others answer", async () => {
    const a = await withRun("q-pa");
    const b = await withRun("q-pb");
    const open = [
      longPoll(a.sid, a.runId),
      longPoll(a.sid, a.runId),
      longPoll(a.sid, a.runId),
      longPoll(b.sid, b.runId),
      longPoll(b.sid, b.runId),
    ];
    await settle();
    const sixth = await longPoll(b.sid, b.runId);
    expectTooMany(sixth, "too_many_long_polls", "1");
    expect(sixth.body.detail).toContain("long_polls_per_tenant");
    // Another tenant polls as ever.
    const other = api.uniqueId("q-pother");
    await api.createSession(other);
    const otherRun = await api.registerRun(other);
    const otherPoll = await api.call(
      "GET",
      `/v1/sessions/${other}/runs/${otherRun}/notifications?after=0&wait_ms=50`,
    );
    expect(otherPoll.status).toBe(200);
    expect((await Promise.all(open)).map((answer) => answer.status)).toEqual([
      200, 200, 200, 200, 200,
    ]);
  });
});

describe("a session at every limit", () => {
  it("still takes a completion and a heartbeat for its reserved jobs, and claims, acks and deletes", async () => {
    const { sid, runId } = await withRun("q-every");
    const base = `/v1/sessions/${sid}/exec-jobs`;
    const h1 = (await quota.call("POST", base, { handle: "h1", command: "a" })).body.callback;
    const h2 = (await quota.call("POST", base, { handle: "h2", command: "b" })).body.callback;
    const path = `/v1/sessions/${sid}/messages`;
    await quota.call("POST", path, { role: "user", content: "x".repeat(4050) });
    const polls = [longPoll(sid, runId), longPoll(sid, runId), longPoll(sid, runId)];
    await settle();
    // At every quota: jobs, bytes, long-polls.
    expect((await quota.call("POST", base, { handle: "h3", command: "c" })).status).toBe(429);
    expect((await quota.call("POST", path, { role: "user", content: "y" })).status).toBe(429);
    expect((await longPoll(sid, runId)).status).toBe(429);

    const beat = await api.call("POST", `${base}/h2/heartbeat`, { token: h2.token, body: {} });
    expect(beat.status).toBe(200);
    const done = await api.complete(sid, "h1", h1.token, api.result(0, "out"));
    expect(done.status).toBe(202);
    expect(done.body).toMatchObject({ outcome: "accepted", disposition: "active_run_notified" });
    // The open long-polls answer the admission.
    expect((await Promise.all(polls)).map((answer) => answer.body.notify_seq)).toEqual([1, 1, 1]);
    const claimed = await quota.call("POST", `/v1/sessions/${sid}/inbox/claim`, {});
    expect(claimed.status).toBe(200);
    expect(claimed.body.claims).toHaveLength(1);
    const acked = await quota.call("POST", `/v1/sessions/${sid}/inbox/ack`, {
      ids: [claimed.body.claims[0].envelope.id],
    });
    expect([acked.status, acked.body.acked]).toEqual([200, [claimed.body.claims[0].envelope.id]]);
    expect((await quota.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    made.splice(made.indexOf(sid), 1);
  });
});

describe("the rate limit per agent token", () => {
  it("past the binding's limit a request gets 429 rate_limited; claims, acks and deletes still work", async () => {
    const rate = as(RATE_AGENT_TOKEN);
    const sid = api.uniqueId("rate");
    expect((await rate.call("POST", "/v1/sessions", { id: sid })).status).toBe(201);
    // The pool's binding allows 20 per 10 s (vitest.config.ts; wrangler.toml's allows 1000).
    const statuses: number[] = [];
    let refused: api.Answer | undefined;
    while (refused === undefined && statuses.length < 40) {
      const answer = await rate.call("GET", `/v1/sessions/${sid}`);
      statuses.push(answer.status);
      if (answer.status === 429) refused = answer;
    }
    expect(refused).toBeDefined();
    expectTooMany(refused as api.Answer, "rate_limited", "10");
    // The create took one place; a window that turned meanwhile may have let up to 20 more by.
    expect(statuses.slice(0, 19)).toEqual(Array(19).fill(200));
    // A refused request changed nothing, and what drains a session is never limited.
    const claim = await rate.call("POST", `/v1/sessions/${sid}/inbox/claim`, {});
    expect([claim.status, claim.body.claims]).toEqual([200, []]);
    const ack = await rate.call("POST", `/v1/sessions/${sid}/inbox/ack`, { ids: ["nope"] });
    expect(ack.status).toBe(200);
    // Another token's budget is its own.
    expect((await api.call("GET", "/v1/sessions/none")).status).toBe(404);
    expect((await rate.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
  }, 60_000);
});

describe("the rate limit and a run that stops", () => {
  it("a limited host can still register its run for a pending resume, pull an accepted result and suspend on a running job", async () => {
    const rate = as(RATE_AGENT_TOKEN);
    // The setup is counted: wait out a window the test above may have spent.
    const counted = async (method: string, path: string, body?: unknown): Promise<api.Answer> => {
      for (let tries = 0; ; tries += 1) {
        const answer = await rate.call(method, path, body);
        if (answer.status !== 429 || tries >= 30) return answer;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    const sid = api.uniqueId("rate-suspend");
    expect(
      (await counted("POST", "/v1/sessions", { id: sid, resume_url: api.hookUrl(sid) })).status,
    ).toBe(201);
    const h1 = await counted("POST", `/v1/sessions/${sid}/exec-jobs`, {
      handle: "h1",
      command: "a",
    });
    const h2 = await counted("POST", `/v1/sessions/${sid}/exec-jobs`, {
      handle: "h2",
      command: "b",
    });
    expect([h1.status, h2.status]).toEqual([201, 201]);
    expect(
      (await api.complete(sid, "h2", h2.body.callback.token, api.result(0, "done"))).status,
    ).toBe(202);
    const resumeId = (await counted("GET", `/v1/sessions/${sid}`)).body.resume?.resume_id;
    expect(typeof resumeId).toBe("string");
    let limited = false;
    for (let i = 0; i < 60 && !limited; i += 1) {
      limited = (await rate.call("GET", `/v1/sessions/${sid}`)).status === 429;
    }
    expect(limited).toBe(true);
    const run = await rate.call("POST", `/v1/sessions/${sid}/runs`, { resume_id: resumeId });
    expect(run.status).toBe(201);
    const pull = await rate.call("GET", `/v1/sessions/${sid}/exec-jobs/h2`);
    expect([pull.status, pull.body.handle]).toEqual([200, "h2"]);
    const suspend = await rate.call("POST", `/v1/sessions/${sid}/runs/${run.body.run_id}/suspend`, {
      waiting_for: ["h1"],
    });
    expect(suspend.status).toBe(200);
    expect((await rate.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
  }, 60_000);
});

describe("the rate limit and a claim in the body", () => {
  it("while limited, run registrations naming a made-up resume_id get 429: a claim in the body buys nothing", async () => {
    const rate = as(RATE_AGENT_TOKEN);
    const sid = api.uniqueId("rate-made-up");
    // Straight to its object: an HTTP create would wait out the window the tests above spent.
    const created = await tenantSessionStub(env, "rate", sid).create({
      tenant: "rate",
      id: sid,
      resumeUrl: null,
      metadata: {},
    });
    expect(created.ok).toBe(true);
    let limited = false;
    for (let i = 0; i < 60 && !limited; i += 1) {
      limited = (await rate.call("GET", `/v1/sessions/${sid}`)).status === 429;
    }
    expect(limited).toBe(true);
    // The pool's limiter counts 20 requests per fixed 10 s window (Miniflare's, by Date.now()):
    // each window that turns during the flood lets up to 20 through, answered 409 as ever. The
    // attack sent 1,000; 200, ten at a time, already pass ten windows' allowance before the fix.
    const window = () => Math.floor(Date.now() / 10_000);
    const first = window();
    const statuses: number[] = [];
    for (let batch = 0; batch < 20; batch += 1) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          rate.call("POST", `/v1/sessions/${sid}/runs`, { resume_id: `rs_madeup${batch}x${i}` }),
        ),
      );
      statuses.push(...answers.map((answer) => answer.status));
    }
    const turned = window() - first;
    const passed = statuses.filter((status) => status !== 429);
    expect(new Set(passed)).toEqual(new Set(passed.length === 0 ? [] : [409]));
    expect(passed.length).toBeLessThanOrEqual(20 * turned);
    // A session that does not exist gets the limiter's 429 from the Worker: no object is started.
    // 30 in a burst: a window that turns meanwhile lets at most its 20 through (to their 404).
    const before = (await listDurableObjectIds(env.SESSIONS)).length;
    const ghosts = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        rate.call("POST", `/v1/sessions/${api.uniqueId(`ghost${i}`)}/runs`, { resume_id: "rs_x" }),
      ),
    );
    const limitedGhosts = ghosts.filter((answer) => answer.status === 429);
    const unlimited = ghosts.filter((answer) => answer.status !== 429);
    expect(limitedGhosts.length).toBeGreaterThanOrEqual(10);
    expect(unlimited.every((answer) => answer.status === 404)).toBe(true);
    expect((await listDurableObjectIds(env.SESSIONS)).length).toBeLessThanOrEqual(
      before + unlimited.length,
    );
  }, 60_000);
});
