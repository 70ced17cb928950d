// A flood of noise cannot flush the audit trail: accepted completions and delivery attempts are
// records, capped apart from the noise (src/session-object/store/audit.ts), so thousands of run
// registrations, claims and refused completions leave every one of them readable, at a bounded
// cost per event. AUDIT_MAX_EVENTS is 40 in the pool: the flood is fifty times the cap.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

type Event = { seq: number; type: string; handle?: string; outcome?: string; resume_id?: string };

/** The whole trail, page by page, as an operator reads it. */
async function trail(sid: string): Promise<Event[]> {
  const all: Event[] = [];
  let after = 0;
  for (;;) {
    const page = await api.call(
      "GET",
      `/v1/ops/sessions/default/${sid}/events?after=${after}&limit=100`,
      {
        token: OPERATOR_TOKEN,
      },
    );
    expect(page.status).toBe(200);
    all.push(...page.body.events);
    if (page.body.next_after === null) return all;
    after = page.body.next_after;
  }
}

describe("the audit trail under a flood", () => {
  it("keeps every completion and delivery record through thousands of run and refused-completion events", async () => {
    const sid = api.uniqueId("flood");
    await api.createSession(sid);
    const handles = ["h1", "h2", "h3", "h4", "h5"];
    const tokens: Record<string, string> = {};
    const resumes: string[] = [];
    // Five real wakes: each completion is accepted and its resume delivered, then taken by a run
    // that claims, acks and finishes, so the flood below finds an empty inbox.
    for (const handle of handles) {
      tokens[handle] = (await api.reserve(sid, handle)).callback.token;
      const runId = await api.registerRun(sid);
      await api.suspend(sid, runId, [handle]);
      const done = await api.complete(sid, handle, tokens[handle]!, api.result(0, handle));
      expect(done.status).toBe(202);
      const resumeId = (await api.view(sid)).resume.resume_id as string;
      resumes.push(resumeId);
      await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
      const woken = await api.registerRun(sid, { resume_id: resumeId });
      const claims = (await api.claim(sid)).body.claims;
      await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, {
        body: { ids: claims.map((c: { envelope: { id: string } }) => c.envelope.id) },
      });
      await api.call("POST", `/v1/sessions/${sid}/runs/${woken}/finish`);
    }

    // The flood: 1,000 runs registered and finished, straight on the object (the pool's HTTP path
    // slows with every request a test sends; the object's is what is under test), and 100
    // duplicate and conflicting completions over HTTP — 2,100 events of noise, 52 times the cap.
    const stub = api.stubOf(sid);
    for (let i = 0; i < 1_000; i += 1) {
      const registered = await stub.registerRun({ runId: `flood-${i}`, resumeId: null });
      expect(registered.ok).toBe(true);
      expect((await stub.finish({ runId: `flood-${i}` })).ok).toBe(true);
    }
    for (let i = 0; i < 50; i += 1) {
      const handle = handles[i % handles.length]!;
      const same = await api.complete(sid, handle, tokens[handle]!, api.result(0, handle));
      const other = await api.complete(sid, handle, tokens[handle]!, api.result(1, "forged"));
      expect([same.status, other.status]).toEqual([200, 409]);
    }

    const events = await trail(sid);
    const accepted = events.filter((e) => e.type === "completion" && e.outcome === "accepted");
    expect(accepted.map((e) => e.handle)).toEqual(handles);
    const deliveries = events.filter((e) => e.type === "delivery");
    expect(deliveries.map((e) => e.resume_id)).toEqual(resumes);
    // The noise is capped apart: only the newest of it shows, in seq order.
    const noise = events.filter((e) => e.type !== "delivery" && e.outcome !== "accepted");
    expect(noise.length).toBeLessThanOrEqual(40);
    expect(noise.length).toBeGreaterThan(0);
    expect(events.map((e) => e.seq)).toEqual(events.map((e) => e.seq).sort((a, b) => a - b));
    expect(Math.max(...events.map((e) => e.seq))).toBeGreaterThan(2_000);
  }, 120_000);
});

/** The session's billed counters (the alarm's trims included). */
async function rowsWritten(sid: string): Promise<number> {
  const answer = await api.stubOf(sid).stats();
  if (!answer.ok) throw new Error("no stats");
  return answer.value.rows_written;
}

/** Noise rows the session stores (what the alarm's trim has not deleted yet). */
const storedNoise = (sid: string) =>
  runInDurableObject(
    api.stubOf(sid),
    (_, state) =>
      state.storage.sql
        .exec<{ n: number }>("SELECT COUNT(*) AS n FROM audit_events WHERE record = 0")
        .one().n,
  );

describe("what a flood costs", () => {
  it("each refused completion writes at most two rows, its event and later its delete, however full the trail is", async () => {
    const sid = api.uniqueId("flood-rows");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    expect((await api.complete(sid, "h1", token, api.result(0, "ok"))).status).toBe(202);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const refuse = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        const refused = await api.complete(sid, "h1", token, api.result(1, `forged ${i}`));
        expect(refused.status).toBe(409);
      }
      // The alarm trims the trail back to its cap: its deletes are counted too.
      await api.until(async () => expect(await storedNoise(sid)).toBeLessThanOrEqual(40));
    };
    // An empty trail, then a full one: each event costs the same bounded rows, not more as the
    // trail fills (no rewrite of older rows, no index growing with it).
    for (const count of [60, 120]) {
      const before = await rowsWritten(sid);
      await refuse(count);
      expect((await rowsWritten(sid)) - before).toBeLessThanOrEqual(2 * count);
    }
  }, 120_000);
});
