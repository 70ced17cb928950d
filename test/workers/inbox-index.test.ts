// The inbox's one index on acked_at: unacked items are its NULL entries, so a claim never
// rewrites an index entry and no count or claim scans the inbox or sorts it.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Store } from "../../src/session-object/store/store";
import * as api from "../support/api";

/** What a request writes and reads, from the object's own counters. */
const counters = async (sid: string) => {
  const body = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body;
  return { written: body.rows_written as number, read: body.rows_read as number };
};

/** A session holding `count` queued items: completions of an idle session (the first wakes it). */
async function inboxOf(sid: string, count: number): Promise<void> {
  await api.createSession(sid);
  const tokens: string[] = [];
  for (let i = 0; i < count; i += 1) tokens.push((await api.reserve(sid, `h${i}`)).callback.token);
  for (let i = 0; i < count; i += 1)
    expect((await api.complete(sid, `h${i}`, tokens[i]!, api.result(0, "x"))).status).toBe(202);
  await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
}

describe("the inbox's one index on acked_at", () => {
  it("a claim of one item writes at most 2 rows and its ack at most 3: the item and its trail event, and the ack's index entry", async () => {
    const sid = api.uniqueId("claim-rows");
    await inboxOf(sid, 1);
    const before = await counters(sid);
    const claimed = await api.claim(sid);
    expect(claimed.body.claims).toHaveLength(1);
    const afterClaim = await counters(sid);
    // A claim leaves `acked_at` alone, so its index entry is not rewritten.
    expect(afterClaim.written - before.written).toBeLessThanOrEqual(2);
    const ack = await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, {
      body: { ids: [claimed.body.claims[0].envelope.id] },
    });
    expect(ack.body).toEqual({ acked: [claimed.body.claims[0].envelope.id], unknown: [] });
    const afterAck = await counters(sid);
    expect(afterAck.written - afterClaim.written).toBeLessThanOrEqual(3);
    expect(await api.inboxCounts(sid)).toEqual({ pending: 0, claimed: 0, acked: 1, generation: 1 });
  });

  it("answers every count and claim as before, and no query the session ran on its inbox scans it or sorts: unacked items are the index's NULL entries, in generation order", async () => {
    const sid = api.uniqueId("inbox-plans");
    await inboxOf(sid, 30);
    // 30 items: claim 16 (the default), ack 14 of them, claim 4 more with a 1 s lease that lapses.
    const first = await api.claim(sid);
    const ids = first.body.claims.map((c: { envelope: { id: string } }) => c.envelope.id);
    expect(ids).toHaveLength(16);
    await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, { body: { ids: ids.slice(0, 14) } });
    const leased = await api.claim(sid, { max: 4, lease_ms: 1000 });
    expect(
      leased.body.claims.map((c: { envelope: { generation: number } }) => c.envelope.generation),
    ).toEqual([17, 18, 19, 20]);
    expect(await api.inboxCounts(sid)).toEqual({
      pending: 10,
      claimed: 6,
      acked: 14,
      generation: 30,
    });
    await api.sleep(1_100);
    // The lapsed leases are claimable again, first by generation, before the pending ones.
    expect(await api.inboxCounts(sid)).toEqual({
      pending: 14,
      claimed: 2,
      acked: 14,
      generation: 30,
    });
    const again = await api.claim(sid, { max: 5 });
    expect(
      again.body.claims.map((c: { envelope: { generation: number } }) => c.envelope.generation),
    ).toEqual([17, 18, 19, 20, 21]);
    await runInDurableObject(api.stubOf(sid), (instance, state) => {
      const { store } = (instance as unknown as { loop: { store: Store } }).loop;
      const reads = [...store.meter.statements].filter(
        (text) => /^\s*SELECT/i.test(text) && /\bFROM inbox\b/.test(text),
      );
      expect(reads.length).toBeGreaterThanOrEqual(4);
      for (const text of reads) {
        const bindings = Array.from(text.match(/\?/g) ?? [], () => 0);
        const plan = state.storage.sql
          .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`, ...bindings)
          .toArray()
          .map((row) => row.detail)
          .join(" | ");
        expect(plan, text).not.toMatch(/SCAN inbox|TEMP B-TREE/);
        if (/acked_at IS (NOT )?NULL/.test(text)) expect(plan, text).toContain("inbox_by_acked_at");
      }
      // The claimable count (9: items 22–30) reads the 16 unacked entries, not the 14 acked beside them.
      const count = reads.find((text) =>
        text.startsWith("SELECT COUNT(*) AS n FROM inbox WHERE acked_at IS NULL"),
      );
      expect(count).toBeDefined();
      const cursor = state.storage.sql.exec<{ n: number }>(count!, Date.now());
      expect(cursor.one().n).toBe(9);
      expect(cursor.rowsRead).toBeLessThanOrEqual(16 + 1);
    });
  }, 30_000);
});
