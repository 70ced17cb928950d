// Operators: their own tokens, each session's audit trail, and the actions that mend
// a stuck agent — each recorded, each refused with a typed error when it does not apply.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { ACME_AGENT_TOKEN, AGENT_TOKEN, OPERATOR_TOKEN } from "../support/secrets";

const OPERATOR = OPERATOR_TOKEN;
const ops = (method: string, path: string, body?: unknown) =>
  api.call(method, `/v1/ops/sessions/default/${path}`, { token: OPERATOR, body });
const events = async (sid: string, query = "") =>
  (await ops("GET", `${sid}/events${query}`)).body.events as Array<Record<string, unknown>>;

describe("operator authentication", () => {
  it("agent tokens do not open operator routes, and operator tokens do not open agent routes", async () => {
    const sid = api.uniqueId("tokens");
    await api.createSession(sid);
    for (const token of [AGENT_TOKEN, ACME_AGENT_TOKEN, null, "wrong"]) {
      const answer = await api.call("GET", `/v1/ops/sessions/default/${sid}`, { token });
      expect([String(token), answer.status, answer.body.code]).toEqual([
        String(token),
        401,
        "unauthorized",
      ]);
    }
    const agentRoute = await api.call("GET", `/v1/sessions/${sid}`, { token: OPERATOR });
    expect([agentRoute.status, agentRoute.body.code]).toEqual([401, "unauthorized"]);
    expect((await ops("GET", sid)).body).toMatchObject({ id: sid, tenant: "default" });
  });

  it("an operator reaches a session of any tenant by its tenant in the path; unknown ones are 404", async () => {
    const sid = api.uniqueId("any-tenant");
    await api.call("POST", "/v1/sessions", { token: ACME_AGENT_TOKEN, body: { id: sid } });
    const seen = await api.call("GET", `/v1/ops/sessions/acme/${sid}`, { token: OPERATOR });
    expect(seen.body).toMatchObject({ id: sid, tenant: "acme" });
    for (const path of [`default/${sid}`, `globex/${sid}`, `Acme/${sid}`, `acme/..`]) {
      const answer = await api.call("GET", `/v1/ops/sessions/${path}`, { token: OPERATOR });
      expect([path, answer.status]).toEqual([path, 404]);
    }
  });
});

describe("the audit trail", () => {
  it("records a session's story in order: run, suspend, completions of each outcome, delivery, claim, ack, finish", async () => {
    const sid = api.uniqueId("story");
    const { tokens, runId } = await api.suspendedOn(sid, ["h1"]);
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "out"))).status).toBe(202);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    await api.until(async () =>
      expect((await events(sid)).map((e) => e.type)).toContain("delivery"),
    );
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "out"))).status).toBe(200);
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(1, "other"))).status).toBe(409);
    const resumeId = (await api.view(sid)).resume.resume_id;
    const woken = await api.registerRun(sid, { resume_id: resumeId });
    const claimed = (await api.claim(sid)).body.claims;
    await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, {
      body: { ids: [claimed[0].envelope.id] },
    });
    await api.call("POST", `/v1/sessions/${sid}/runs/${woken}/finish`);

    const trail = await events(sid);
    expect(trail.map((event) => event.type)).toEqual([
      "run_registered",
      "run_suspended",
      "completion",
      "delivery",
      "completion",
      "completion",
      "run_registered",
      "claim",
      "ack",
      "run_finished",
    ]);
    expect(trail.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(trail[0]).toMatchObject({ run_id: runId, resume_id: null });
    expect(trail[1]).toMatchObject({ run_id: runId, waiting_for: ["h1"], wake: "all" });
    expect([trail[2], trail[4], trail[5]]).toMatchObject([
      { handle: "h1", outcome: "accepted", disposition: "resume_scheduled" },
      { handle: "h1", outcome: "duplicate", disposition: null },
      { handle: "h1", outcome: "result_conflict", disposition: null },
    ]);
    expect(trail[3]).toMatchObject({ resume_id: resumeId, attempt: 1, status: 200, error: null });
    expect(typeof trail[3]?.duration_ms).toBe("number");
    expect(trail[6]).toMatchObject({ run_id: woken, resume_id: resumeId });
    expect(trail[7]).toMatchObject({ count: 1, ids: [claimed[0].envelope.id] });
    expect(trail[8]).toMatchObject({ count: 1, ids: [claimed[0].envelope.id] });
    expect(trail[9]).toMatchObject({ run_id: woken, status: "idle" });
    expect(Date.parse(String(trail[0]?.at))).toBeGreaterThan(0);
  });

  it("a failed delivery is recorded with its status and error", async () => {
    const sid = api.uniqueId("failed-attempt");
    await api.wokenSession(sid, [503]);
    await api.until(async () =>
      expect((await events(sid)).filter((e) => e.type === "delivery")).toHaveLength(1),
    );
    const [attempt] = (await events(sid)).filter((event) => event.type === "delivery");
    expect(attempt).toMatchObject({ attempt: 1, status: 503, error: "agent host answered 503" });
  });

  it("a completion of an ended lifetime is recorded by the lifetime that refused it", async () => {
    const sid = api.uniqueId("old-lifetime");
    const first = await api.createSession(sid);
    const { callback } = await api.reserve(sid, "h1");
    await api.call("DELETE", `/v1/sessions/${sid}`);
    await api.createSession(sid);
    const refused = await api.complete(sid, "h1", callback.token, api.result(0, "late"));
    expect(refused.status).toBe(410);
    expect(await events(sid)).toMatchObject([
      {
        type: "completion",
        handle: "h1",
        outcome: "lifetime_ended",
        token_lifetime: first.lifetime,
      },
    ]);
  });

  it("a completion for a session that does not exist leaves no trail and no storage", async () => {
    const sid = api.uniqueId("gone");
    await api.createSession(sid);
    const { callback } = await api.reserve(sid, "h1");
    await api.call("DELETE", `/v1/sessions/${sid}`);
    expect((await api.complete(sid, "h1", callback.token, api.result(0, "late"))).status).toBe(410);
    expect((await ops("GET", `${sid}/events`)).status).toBe(404);
  });

  it("a ceiling that fires is recorded with the handles it gave up on", async () => {
    const sid = api.uniqueId("ceiling");
    await api.createSession(sid);
    await api.reserve(sid, "h1");
    await api.reserve(sid, "h2");
    const runId = await api.registerRun(sid);
    await api.suspend(sid, runId, ["h1", "h2"], { ceiling_ms: 1000 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await api.fireAlarm(sid);
    expect((await events(sid)).find((event) => event.type === "ceiling")).toMatchObject({
      handles: ["h1", "h2"],
    });
  });

  it("keeps the newest AUDIT_MAX_EVENTS events of noise (40 here) and, apart, of records, paged by seq", async () => {
    const sid = api.uniqueId("bounded");
    await api.createSession(sid);
    const { callback } = await api.reserve(sid, "h1");
    await api.complete(sid, "h1", callback.token, api.result(0, "x"));
    // Half a cap more than the cap: enough to hide the oldest; each is a commit.
    for (let i = 0; i < 59; i += 1)
      await api.complete(sid, "h1", callback.token, api.result(0, "x"));
    await api.until(async () =>
      expect((await events(sid)).map((e) => e.type)).toContain("delivery"),
    );
    const all = (await ops("GET", `${sid}/events?limit=500`)).body.events as {
      seq: number;
      type: string;
      outcome?: string;
    }[];
    // 60 completions and the resume's delivery: the accepted completion and the delivery are
    // records, capped apart; of the 59 duplicates (noise) the newest 40 remain, whatever seqs the
    // records took among them.
    const isRecord = (e: { type: string; outcome?: string }) =>
      e.type === "delivery" || e.outcome === "accepted";
    const records = all.filter(isRecord);
    expect(records.map((e) => e.type)).toEqual(["completion", "delivery"]);
    expect(records[0]?.seq).toBe(1);
    const last = all.at(-1)?.seq ?? 0;
    expect(last).toBe(61);
    const noiseSeqs = Array.from({ length: last }, (_, i) => i + 1).filter(
      (seq) => seq !== records[0]?.seq && seq !== records[1]?.seq,
    );
    expect(all.filter((e) => !isRecord(e)).map((e) => e.seq)).toEqual(noiseSeqs.slice(-40));
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((a, b) => a - b));
    // Pages of 25 walk the same events in the same order, and end with next_after null.
    const paged: { seq: number }[] = [];
    let cursor = 0;
    for (let page = 0; page < 10; page += 1) {
      const body = (await ops("GET", `${sid}/events?after=${cursor}&limit=25`)).body;
      expect(body.events.length).toBeLessThanOrEqual(25);
      paged.push(...body.events);
      if (body.next_after === null) break;
      cursor = body.next_after;
    }
    expect(paged).toEqual(all);
    // The storage is bounded too: the alarm trims the noise past its cap, the records stay.
    const stored = () =>
      runInDurableObject(api.stubOf(sid), (_, state) =>
        state.storage.sql
          .exec<{ record: number; n: number }>(
            "SELECT record, COUNT(*) AS n FROM audit_events GROUP BY record ORDER BY record",
          )
          .toArray()
          .map((row) => row.n),
      );
    await api.until(async () => expect((await stored())[0]).toBeLessThanOrEqual(40));
    expect((await stored())[1]).toBe(2);
    // A page reads its own rows by seq, not the whole trail.
    const before = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body.rows_read;
    expect((await ops("GET", `${sid}/events?after=${last - 10}&limit=2`)).body.events).toHaveLength(
      2,
    );
    const after = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body.rows_read;
    // Reading the whole trail would be 40 rows and more; a page of 2 reads a handful.
    expect(after - before).toBeLessThanOrEqual(10);
    const bad = await ops("GET", `${sid}/events?limit=0`);
    expect([bad.status, bad.body.code]).toEqual([422, "invalid_request"]);
  });
});

describe("operator actions", () => {
  it("expire-wait ends an armed wait now, as its ceiling would, and is refused when none is armed", async () => {
    const sid = api.uniqueId("expire");
    await api.suspendedOn(sid, ["h1"]);
    const expired = await ops("POST", `${sid}/expire-wait`);
    expect(expired.status).toBe(200);
    expect(expired.body).toMatchObject({ status: "resuming", waiting_for_bash: null });
    expect(expired.body.resume.reason).toBe("background_exec_wait_expired");
    const again = await ops("POST", `${sid}/expire-wait`);
    expect([again.status, again.body.code]).toEqual([409, "invalid_transition"]);
    expect((await events(sid)).filter((e) => e.type === "operator")).toMatchObject([
      { action: "expire_wait" },
    ]);
  });

  it("mark-lost gives a running job the result lost, ended_by operator, and wakes like any lost result", async () => {
    const sid = api.uniqueId("lost");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    const marked = await ops("POST", `${sid}/exec-jobs/h1/mark-lost`);
    expect([marked.status, marked.body.outcome]).toEqual([200, "accepted"]);
    const job = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body;
    expect(job).toMatchObject({ status: "lost", ended_by: "operator", exit_code: null });
    expect((await api.view(sid)).resume.reason).toBe("background_exec_outcome_unknown");
    // The runner's late result now conflicts: the first result wins.
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "late"))).status).toBe(409);
    const again = await ops("POST", `${sid}/exec-jobs/h1/mark-lost`);
    expect([again.status, again.body.code]).toEqual([409, "invalid_transition"]);
    const unknown = await ops("POST", `${sid}/exec-jobs/nope/mark-lost`);
    expect([unknown.status, unknown.body.code]).toEqual([404, "not_found"]);
    expect((await events(sid)).filter((e) => e.type === "operator")).toMatchObject([
      { action: "mark_lost", handle: "h1" },
    ]);
  });

  it("redeliver gives a failed resume a new resume_id that is delivered; refused when none failed", {
    timeout: 30_000,
  }, async () => {
    const sid = api.uniqueId("redeliver");
    const refused = await (async () => {
      await api.scriptHost(sid, [503, 503, 503, 503]);
      const { tokens } = await api.suspendedOn(sid, ["h1"]);
      const early = await ops("POST", `${sid}/redeliver`);
      await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"));
      return early;
    })();
    expect([refused.status, refused.body.code]).toEqual([409, "invalid_transition"]);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("failed"), 20_000);
    const failedId = (await api.view(sid)).resume.resume_id;
    const redelivered = await ops("POST", `${sid}/redeliver`);
    expect(redelivered.status).toBe(200);
    expect(redelivered.body.resume_id).not.toBe(failedId);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(5));
    expect((await api.deliveries(sid)).at(-1)?.headers["webhook-id"]).toBe(
      redelivered.body.resume_id,
    );
    expect((await api.view(sid)).resume).toMatchObject({ state: "delivered", attempts: 1 });
    expect((await events(sid)).find((e) => e.type === "operator")).toMatchObject({
      action: "redeliver",
      resume_id: redelivered.body.resume_id,
    });
  });

  it("a run registered after a failed resume takes it: nothing is left to redeliver", {
    timeout: 30_000,
  }, async () => {
    const sid = api.uniqueId("recovered");
    await api.wokenSession(sid, [503, 503, 503, 503]);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("failed"), 20_000);
    // The host comes back by itself and registers a run.
    const runId = await api.registerRun(sid);
    expect((await api.view(sid)).resume).toMatchObject({ state: "completed" });
    const refused = await ops("POST", `${sid}/redeliver`);
    expect([refused.status, refused.body.code]).toEqual([409, "invalid_transition"]);
    expect(await api.deliveries(sid)).toHaveLength(4);
    // Finishing with the result unclaimed is a new wake (inbox_pending), not the failed one again.
    await api.call("POST", `/v1/sessions/${sid}/runs/${runId}/finish`);
    expect((await api.view(sid)).resume.reason).toBe("inbox_pending");
    expect((await ops("POST", `${sid}/redeliver`)).status).toBe(409);
  });

  it("registering the active run again records nothing new", async () => {
    const sid = api.uniqueId("re-register");
    await api.createSession(sid);
    await api.registerRun(sid, { run_id: "run-1" });
    await api.registerRun(sid, { run_id: "run-1" });
    expect((await events(sid)).map((event) => event.type)).toEqual(["run_registered"]);
  });

  it("an operator delete ends the lifetime like the agent's, and a second one is 404", async () => {
    const sid = api.uniqueId("op-delete");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    expect((await ops("DELETE", sid)).status).toBe(204);
    expect((await api.call("GET", `/v1/sessions/${sid}`)).body.code).toBe("not_found");
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"))).status).toBe(410);
    expect((await ops("DELETE", sid)).status).toBe(404);
  });
});
