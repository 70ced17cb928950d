// Issue 24 item 3: the rows a wake writes. A wake's two records (the accepted completion and its
// delivery attempt) share one row of the records ring: the completion's record waits in the
// session row its commit writes anyway (`audit_held`, migration 11), and the delivery's commit
// writes both into one slot. What an operator reads is unchanged: two events, their own seqs, in
// order, through restarts and rollbacks (docs/decisions.md 820). AUDIT_MAX_EVENTS is 40 here.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../src/domain/audit";
import type { Core } from "../../src/domain/decision";
import { AuditStore } from "../../src/session-object/audit-store";
import { prepareSchema } from "../../src/session-object/migrations";
import type { Store } from "../../src/session-object/store/store";
import * as api from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

type Event = { seq: number; type: string; outcome?: string; handle?: string; attempt?: number };

async function trail(sid: string): Promise<Event[]> {
  const page = await api.call("GET", `/v1/ops/sessions/default/${sid}/events?limit=500`, {
    token: OPERATOR_TOKEN,
  });
  expect(page.status).toBe(200);
  return page.body.events;
}

const records = (events: Event[]) =>
  events.filter((e) => e.type === "delivery" || e.outcome === "accepted");

/** The records ring's rows and the session row's held record, as stored. */
const stored = (sid: string) =>
  runInDurableObject(api.stubOf(sid), (_, state) => {
    const sql = state.storage.sql;
    return {
      rows: sql
        .exec<{ seq: number; second: string | null }>(
          "SELECT seq, second FROM audit_kept ORDER BY ring_seq",
        )
        .toArray()
        .map((row) => [row.seq, row.second === null ? null : JSON.parse(row.second).seq]),
      held: sql.exec<{ held: string | null }>("SELECT audit_held AS held FROM session").one().held,
    };
  });

describe("a wake's records", () => {
  it("read back as two events with consecutive seqs, held in the session row while the delivery is on the wire, then one row", async () => {
    const sid = api.uniqueId("wake-pair");
    await api.scriptHost(sid, [{ status: 200, delayMs: 1_000 }]);
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"))).status).toBe(202);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    // On the wire: the completion's record is in the session row, no slot taken yet.
    const onWire = records(await trail(sid));
    expect(onWire.map((e) => [e.type, e.outcome])).toEqual([["completion", "accepted"]]);
    const held = await stored(sid);
    expect(held.rows).toEqual([]);
    expect(JSON.parse(held.held ?? "null")).toMatchObject({
      seq: onWire[0]!.seq,
      type: "completion",
    });

    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const after = records(await trail(sid));
    expect(after).toEqual([
      onWire[0],
      expect.objectContaining({ type: "delivery", attempt: 1, status: 200 }),
    ]);
    expect(after[1]!.seq).toBe(after[0]!.seq + 1);
    expect(await stored(sid)).toEqual({ rows: [[after[0]!.seq, after[1]!.seq]], held: null });
  });

  it("survive an object aborted mid-delivery: the held completion is read after the restart and shares the retried delivery's row", async () => {
    const sid = api.uniqueId("wake-pair-abort");
    await api.wokenSession(sid, [{ status: 200, delayMs: 1_500 }]);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    const before = records(await trail(sid));
    expect(before.map((e) => e.type)).toEqual(["completion"]);
    await abortAllDurableObjects();
    // The restarted object reads the held record from the session row: the same event, same seq.
    expect(records(await trail(sid))).toEqual(before);
    await api.until(
      async () => expect((await api.view(sid)).resume.state).toBe("delivered"),
      30_000,
    );
    const all = await trail(sid);
    // The aborted attempt recorded no outcome; the retry's is the next record.
    expect(records(all)).toEqual([
      before[0],
      expect.objectContaining({ type: "delivery", attempt: 2, status: 200 }),
    ]);
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((a, b) => a - b));
    expect(new Set(all.map((e) => e.seq)).size).toBe(all.length);
    const rows = await stored(sid);
    expect(rows.held).toBeNull();
    expect(rows.rows).toEqual([[before[0]!.seq, records(all)[1]!.seq]]);
  }, 40_000);
});

const accepted = (handle: string): AuditEvent =>
  ({ type: "completion", handle, outcome: "accepted", disposition: "queued" }) as AuditEvent;

describe("a held record and a rollback", () => {
  it("a commit that throws after taking the held record into its row leaves it held, and nothing is lost or doubled", async () => {
    const sid = api.uniqueId("held-rollback");
    await api.createSession(sid);
    await runInDurableObject(api.stubOf(sid), (instance, state) => {
      // The loop's store: \`record\` and the commit's \`persist\` (this core before, none after).
      const { store, core } = (instance as unknown as { loop: { store: Store; core: Core } }).loop;
      const kernel = {
        record: (event: AuditEvent) => store.record(core, event),
        commit: (_next: null, writes: readonly never[], events: readonly AuditEvent[]) =>
          store.persist(core, null, writes, events),
        audit: store.audit,
      };
      const sql = state.storage.sql;
      // Hold h1 as a commit that writes the session row would (the store's own entry point),
      // and write the session row's column as that commit does.
      state.storage.transactionSync(() => {
        kernel.audit.append(sql, Date.now(), accepted("h1"), true);
        sql.exec("UPDATE session SET audit_held = ?", kernel.audit.heldText);
      });
      // The second event breaks the noise ring's CHECK after h2 took h1 into its row.
      expect(() =>
        kernel.commit(null, [], [accepted("h2"), { type: "bogus" } as unknown as AuditEvent]),
      ).toThrow();
      kernel.record(accepted("h3"));
      kernel.record(accepted("h4"));
      const page = kernel.audit.page(sql, Date.now(), { after: 0, limit: 100 });
      const kept = page.events.filter((e) => e.type === "completion");
      expect(kept.map((e) => (e as { handle?: string }).handle)).toEqual(["h1", "h3", "h4"]);
      const seqs = page.events.map((e) => e.seq);
      expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
      // h1 and h3 share a row; h4 has its own; nothing waits in the session row.
      expect(sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM audit_kept").one().n).toBe(2);
      expect(
        sql.exec<{ held: string | null }>("SELECT audit_held AS held FROM session").one().held,
      ).toBeNull();
    });
  });
});

type Step =
  | { kind: "record"; hold: boolean }
  | { kind: "noise" }
  | { kind: "restart" }
  | { kind: "rollback" };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.boolean().map((hold) => ({ kind: "record", hold }) as Step) },
  { weight: 3, arbitrary: fc.constant({ kind: "noise" } as Step) },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" } as Step) },
  { weight: 1, arbitrary: fc.constant({ kind: "rollback" } as Step) },
);

describe("the records ring with held records and shared rows", () => {
  it("shows, for any order of holds, shared rows, restarts and rollbacks, the newest records and noise in seq order, alike in one page and in pages", async () => {
    const size = 6;
    const bounds = { auditMaxEvents: size, auditRetentionMs: 60_000 };
    await runInDurableObject(api.stubOf(api.uniqueId("held-model")), (_, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => prepareSchema(sql));
      fc.assert(
        fc.property(fc.array(step, { maxLength: 80, size: "max" }), (steps) => {
          sql.exec("DELETE FROM audit");
          sql.exec("DELETE FROM audit_kept");
          const now = Date.now();
          // The session row's column: what committed.
          let heldRow: string | null = null;
          let store = new AuditStore(bounds);
          const model: { seq: number; record: boolean; name: string }[] = [];
          let seq = 0;
          for (const [i, s] of steps.entries()) {
            if (s.kind === "restart") {
              store = new AuditStore(bounds);
              store.adopt(heldRow);
              continue;
            }
            if (s.kind === "rollback") {
              expect(() =>
                state.storage.transactionSync(() => {
                  store.append(sql, now, accepted(`lost${i}`), true);
                  throw new Error("rolled back");
                }),
              ).toThrow();
              store.reload(heldRow);
              continue;
            }
            const record = s.kind === "record";
            state.storage.transactionSync(() =>
              store.append(
                sql,
                now,
                record
                  ? accepted(`e${i}`)
                  : ({ type: "run_registered", run_id: `e${i}`, resume_id: null } as AuditEvent),
                record && s.hold,
              ),
            );
            heldRow = store.heldText;
            seq += 1;
            model.push({ seq, record, name: `e${i}` });
          }
          const name = (e: object) =>
            (e as { handle?: string; run_id?: string }).handle ?? (e as { run_id?: string }).run_id;
          const whole = store.page(sql, now, { after: 0, limit: 500 });
          expect(whole.next_after).toBeNull();
          const shown = whole.events.map((e) => ({ seq: e.seq, name: name(e) }));
          const paged: typeof shown = [];
          let after = 0;
          for (let guard = 0; guard < 100; guard += 1) {
            const page = store.page(sql, now, { after, limit: 2 });
            paged.push(...page.events.map((e) => ({ seq: e.seq, name: name(e) })));
            if (page.next_after === null) break;
            after = page.next_after;
          }
          expect(paged).toEqual(shown);
          const pick = (record: boolean) =>
            model.filter((e) => e.record === record).map((e) => ({ seq: e.seq, name: e.name }));
          const shownOf = (record: boolean) =>
            shown.filter((e) => model.find((m) => m.seq === e.seq)?.record === record);
          // Noise: exactly its newest `size`. Records: a suffix of them, never more than `size`,
          // and at most the oldest one short of it (the one whose row the newest overwrote).
          expect(shownOf(false)).toEqual(pick(false).slice(-size));
          const allRecords = pick(true);
          const shownRecords = shownOf(true);
          expect(shownRecords).toEqual(allRecords.slice(-shownRecords.length || allRecords.length));
          expect(shownRecords.length).toBeLessThanOrEqual(size);
          expect(shownRecords.length).toBeGreaterThanOrEqual(Math.min(allRecords.length, size - 1));
          expect(shown.map((e) => e.seq)).toEqual(
            [...shown.map((e) => e.seq)].sort((a, b) => a - b),
          );
        }),
        { numRuns: 60 },
      );
    });
  }, 60_000);
});

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

describe("the inbox's one index on acked_at (migration 11)", () => {
  it("a claim of one item writes 2 rows and its ack 3: the item and its trail event, and the ack's index entry (3 and 4 before)", async () => {
    const sid = api.uniqueId("claim-rows");
    await inboxOf(sid, 1);
    const before = await counters(sid);
    const claimed = await api.claim(sid);
    expect(claimed.body.claims).toHaveLength(1);
    const afterClaim = await counters(sid);
    expect(afterClaim.written - before.written).toBe(2);
    const ack = await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, {
      body: { ids: [claimed.body.claims[0].envelope.id] },
    });
    expect(ack.body).toEqual({ acked: [claimed.body.claims[0].envelope.id], unknown: [] });
    const afterAck = await counters(sid);
    expect(afterAck.written - afterClaim.written).toBe(3);
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
