// Through the object: operator actions and cancels are records, which no flood of refused
// completions pushes out, and noise is capped apart from them. AUDIT_MAX_EVENTS is 40 in the pool.
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

type Event = { seq: number; type: string; action?: string; outcome?: string; handle?: string };

/** The whole trail, page by page, as an operator reads it. */
async function trail(sid: string, limit = 100): Promise<Event[]> {
  const all: Event[] = [];
  let after = 0;
  for (;;) {
    const page = await api.call(
      "GET",
      `/v1/ops/sessions/default/${sid}/events?after=${after}&limit=${limit}`,
      { token: OPERATOR_TOKEN },
    );
    expect(page.status).toBe(200);
    all.push(...page.body.events);
    if (page.body.next_after === null) return all;
    after = page.body.next_after;
  }
}

describe("records", () => {
  it("keeps an operator's mark-lost and an agent's cancel through sixty refused completions from a stale runner", async () => {
    const sid = api.uniqueId("op-flush");
    await api.createSession(sid);
    const h1 = (await api.reserve(sid, "h1")).callback.token;
    await api.reserve(sid, "h2");
    await api.reserve(sid, "h3");
    const marked = await api.call(
      "POST",
      `/v1/ops/sessions/default/${sid}/exec-jobs/h2/mark-lost`,
      { token: OPERATOR_TOKEN },
    );
    expect(marked.status).toBe(200);
    const cancelled = await api.call("POST", `/v1/sessions/${sid}/exec-jobs/h3/cancel`);
    expect(cancelled.status).toBe(202);
    expect((await api.complete(sid, "h1", h1, api.result(0, "ok"))).status).toBe(202);
    for (let i = 0; i < 60; i += 1) {
      expect((await api.complete(sid, "h1", h1, api.result(1, `forged ${i}`))).status).toBe(409);
    }
    const events = await trail(sid);
    expect(events.filter((e) => e.type === "operator").map((e) => e.action)).toEqual(["mark_lost"]);
    expect(events.filter((e) => e.type === "cancel").map((e) => e.handle)).toEqual(["h3"]);
  }, 60_000);
});

describe("noise", () => {
  it("shows a run's registration and a claim after 45 more accepted completions (two noise events, 46 records)", async () => {
    const sid = api.uniqueId("noise-hidden");
    await api.createSession(sid);
    await api.registerRun(sid, {});
    const first = (await api.reserve(sid, "first")).callback.token;
    expect((await api.complete(sid, "first", first, api.result(0, "ok"))).status).toBe(202);
    const claim = await api.call("POST", `/v1/sessions/${sid}/inbox/claim`, {});
    expect([claim.status, claim.body.claims.length]).toEqual([200, 1]);
    for (let i = 0; i < 45; i += 1) {
      const token = (await api.reserve(sid, `h${i}`)).callback.token;
      expect((await api.complete(sid, `h${i}`, token, api.result(0, "ok"))).status).toBe(202);
    }
    for (const limit of [100, 7]) {
      const events = await trail(sid, limit);
      expect(events.filter((e) => e.type === "run_registered")).toHaveLength(1);
      expect(events.filter((e) => e.type === "claim")).toHaveLength(1);
      const seqs = events.map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
    }
  }, 60_000);
});
