// The audit trail's table: reads show the newest AUDIT_MAX_EVENTS of each kind (records and noise)
// within the retention whether or not the alarm has trimmed yet; the trim deletes, in bounded
// batches, only what reads already hide; a rolled-back append leaves no hole. AUDIT_MAX_EVENTS is
// 40 in the pool.
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../src/domain/audit";
import { migrate } from "../../src/session-object/migrations";
import { AuditTrail, TRIM_BATCH } from "../../src/session-object/store/audit";
import type { Store } from "../../src/session-object/store/store";
import { applyWrite } from "../../src/session-object/store/writers";
import * as api from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

const accepted = (handle: string): AuditEvent =>
  ({ type: "completion", handle, outcome: "accepted", disposition: "queued" }) as AuditEvent;
const noise = (i: number): AuditEvent =>
  ({ type: "run_registered", run_id: `r${i}`, resume_id: null }) as AuditEvent;

const nameOf = (event: object) =>
  (event as { handle?: string }).handle ?? (event as { run_id?: string }).run_id;

/** Every event a reader sees, page by page of `limit`. */
function readAll(trail: AuditTrail, sql: SqlStorage, now: number, limit: number) {
  const seen: { seq: number; name: string | undefined }[] = [];
  let after = 0;
  for (let guard = 0; guard < 1_000; guard += 1) {
    const page = trail.page(sql, now, { after, limit });
    expect(page.events.length).toBeLessThanOrEqual(limit);
    seen.push(...page.events.map((e) => ({ seq: e.seq, name: nameOf(e) })));
    if (page.next_after === null) return seen;
    after = page.next_after;
  }
  throw new Error("the pages never ended");
}

const rowCount = (sql: SqlStorage, record: 0 | 1) =>
  sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM audit_events WHERE record = ?", record).one()
    .n;

/** Applies trims the way the alarm does, one batch a run, until none is due. */
function trimUntilDone(trail: AuditTrail, storage: DurableObjectStorage, now: number): number {
  let runs = 0;
  for (;;) {
    const trim = trail.trimWrite(storage.sql, now);
    if (trim === null) return runs;
    expect(trim.max).toBeLessThanOrEqual(TRIM_BATCH);
    storage.transactionSync(() => applyWrite(storage.sql, trim));
    trail.reload();
    runs += 1;
    if (runs > 100) throw new Error("the trim never ended");
  }
}

describe("the trail's reads", () => {
  it("show the newest AUDIT_MAX_EVENTS events of each kind, in seq order, before any trim", async () => {
    await runInDurableObject(api.stubOf(api.uniqueId("trail-window")), (_, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => migrate(sql));
      const now = Date.now();
      const trail = new AuditTrail({ auditMaxEvents: 40, auditRetentionMs: 60_000 });
      for (let i = 0; i < 100; i += 1)
        trail.append(sql, now, i % 2 === 0 ? noise(i) : accepted(`h${i}`));
      // The newest 40 of each kind: seqs 21..100, though all 100 rows are still stored.
      const seqs = Array.from({ length: 80 }, (_, i) => i + 21);
      expect(readAll(trail, sql, now, 9).map((e) => e.seq)).toEqual(seqs);
      expect(readAll(trail, sql, now, 500).map((e) => e.seq)).toEqual(seqs);
      expect(rowCount(sql, 0) + rowCount(sql, 1)).toBe(100);
    });
  });

  it("hide an expired event at once, and the seqs go on after the trim deleted every other one", async () => {
    await runInDurableObject(api.stubOf(api.uniqueId("trail-expiry")), (_, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => migrate(sql));
      const retention = 60_000;
      const trail = new AuditTrail({ auditMaxEvents: 40, auditRetentionMs: retention });
      const t0 = 1_700_000_000_000;
      for (let i = 0; i < 5; i += 1)
        trail.append(sql, t0 + i, i % 2 === 0 ? noise(i) : accepted(`h${i}`));
      expect(readAll(trail, sql, t0 + retention - 1, 100).map((e) => e.seq)).toEqual([
        1, 2, 3, 4, 5,
      ]);
      // Past the retention nothing shows, trimmed or not.
      const later = t0 + 4 + retention;
      expect(readAll(trail, sql, later, 100)).toEqual([]);
      // The trim is due once the oldest has been expired a while, and leaves only the newest row.
      const due = trail.trimDueAt(sql, later);
      expect(due).not.toBeNull();
      expect(trimUntilDone(trail, state.storage, due!)).toBeGreaterThan(0);
      expect(rowCount(sql, 0) + rowCount(sql, 1)).toBe(1);
      expect(trail.trimDueAt(sql, due!)).toBeNull();
      trail.append(sql, due!, accepted("after"));
      expect(readAll(trail, sql, due!, 100)).toEqual([{ seq: 6, name: "after" }]);
    });
  });
});

describe("the trim", () => {
  it("deletes in bounded batches exactly what reads already hid, keeping every record through a flood of noise", async () => {
    await runInDurableObject(api.stubOf(api.uniqueId("trail-trim")), (_, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => migrate(sql));
      const now = Date.now();
      const trail = new AuditTrail({ auditMaxEvents: 40, auditRetentionMs: 60_000 });
      for (let i = 0; i < 30; i += 1) trail.append(sql, now, accepted(`h${i}`));
      // Far more noise than one batch deletes.
      const flood = TRIM_BATCH + 300;
      for (let i = 0; i < flood; i += 1) trail.append(sql, now, noise(i));
      const before = readAll(trail, sql, now, 100);
      expect(trail.trimDueAt(sql, now)).toBe(now);
      expect(trimUntilDone(trail, state.storage, now)).toBeGreaterThan(1);
      expect(readAll(trail, sql, now, 100)).toEqual(before);
      expect([rowCount(sql, 0), rowCount(sql, 1)]).toEqual([40, 30]);
      expect(before.filter((e) => e.name?.startsWith("h"))).toHaveLength(30);
    });
  });

  it("runs from the alarm once refused completions pass the cap, leaving the accepted one", async () => {
    const sid = api.uniqueId("trail-alarm");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    expect((await api.complete(sid, "h1", token, api.result(0, "ok"))).status).toBe(202);
    // Refused completions commit no decision: only their own records arm the alarm.
    for (let i = 0; i < 60; i += 1) {
      expect((await api.complete(sid, "h1", token, api.result(1, `forged ${i}`))).status).toBe(409);
    }
    const stored = () =>
      runInDurableObject(api.stubOf(sid), (_, state) => [
        rowCount(state.storage.sql, 0),
        rowCount(state.storage.sql, 1),
      ]);
    await api.until(async () => expect((await stored())[0]).toBeLessThanOrEqual(40));
    const page = await api.call("GET", `/v1/ops/sessions/default/${sid}/events?limit=500`, {
      token: OPERATOR_TOKEN,
    });
    const events = page.body.events as { type: string; outcome?: string }[];
    expect(events.filter((e) => e.outcome === "accepted")).toHaveLength(1);
    expect(events.filter((e) => e.outcome === "result_conflict")).toHaveLength(40);
  }, 60_000);
});

describe("a transaction that rolls back", () => {
  it("leaves no hole that hides older records: the tally is read again", async () => {
    await runInDurableObject(api.stubOf(api.uniqueId("trail-hole")), (_, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => migrate(sql));
      const now = Date.now();
      const trail = new AuditTrail({ auditMaxEvents: 40, auditRetentionMs: 60_000 });
      for (let i = 1; i <= 4; i += 1) {
        state.storage.transactionSync(() => trail.append(sql, now, accepted(`h${i}`)));
      }
      expect(() =>
        state.storage.transactionSync(() => {
          trail.append(sql, now, accepted("rolled-back"));
          trail.append(sql, now, noise(0));
          throw new Error("out of memory: SQLITE_NOMEM");
        }),
      ).toThrow();
      trail.reload();
      for (let i = 6; i <= 10; i += 1) {
        state.storage.transactionSync(() => trail.append(sql, now, accepted(`h${i}`)));
      }
      expect(readAll(trail, sql, now, 100)).toEqual(
        ["h1", "h2", "h3", "h4", "h6", "h7", "h8", "h9", "h10"].map((name, i) => ({
          seq: i + 1,
          name,
        })),
      );
    });
  });

  it("through the store: a commit whose transaction throws leaves the records before it readable", async () => {
    const sid = api.uniqueId("trail-store-hole");
    await api.createSession(sid);
    await runInDurableObject(api.stubOf(sid), (instance, state) => {
      const { store } = (instance as unknown as { loop: { store: Store } }).loop;
      for (let i = 1; i <= 4; i += 1) store.record(accepted(`h${i}`));
      // The second event breaks the table's CHECK: the transaction rolls the first back.
      expect(() =>
        store.persist(
          null,
          null,
          [],
          [accepted("rolled-back"), { type: "bogus" } as unknown as AuditEvent],
        ),
      ).toThrow();
      for (let i = 6; i <= 10; i += 1) store.record(accepted(`h${i}`));
      const page = store.audit.page(state.storage.sql, Date.now(), { after: 0, limit: 100 });
      expect(page.events.map(nameOf)).toEqual([
        "h1",
        "h2",
        "h3",
        "h4",
        "h6",
        "h7",
        "h8",
        "h9",
        "h10",
      ]);
    });
  });
});

type Step =
  | { kind: "record" }
  | { kind: "noise" }
  | { kind: "restart" }
  | { kind: "rollback" }
  | { kind: "trim" };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "record" } as Step) },
  { weight: 4, arbitrary: fc.constant({ kind: "noise" } as Step) },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" } as Step) },
  { weight: 1, arbitrary: fc.constant({ kind: "rollback" } as Step) },
  { weight: 1, arbitrary: fc.constant({ kind: "trim" } as Step) },
);

describe("the trail against its model", () => {
  it("shows, for any order of appends, restarts, rollbacks and trims, exactly the newest of each kind in seq order, alike in one page and in pages", async () => {
    const size = 6;
    const bounds = { auditMaxEvents: size, auditRetentionMs: 60_000 };
    await runInDurableObject(api.stubOf(api.uniqueId("trail-model")), (_, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => migrate(sql));
      fc.assert(
        fc.property(fc.array(step, { maxLength: 80, size: "max" }), (steps) => {
          sql.exec("DELETE FROM audit_events");
          const now = Date.now();
          let trail = new AuditTrail(bounds);
          const model: { seq: number; record: boolean; name: string }[] = [];
          for (const [i, s] of steps.entries()) {
            if (s.kind === "restart") {
              trail = new AuditTrail(bounds);
              continue;
            }
            if (s.kind === "rollback") {
              expect(() =>
                state.storage.transactionSync(() => {
                  trail.append(sql, now, accepted(`lost${i}`));
                  throw new Error("rolled back");
                }),
              ).toThrow();
              trail.reload();
              continue;
            }
            if (s.kind === "trim") {
              trimUntilDone(trail, state.storage, now);
              continue;
            }
            const record = s.kind === "record";
            state.storage.transactionSync(() =>
              trail.append(sql, now, record ? accepted(`e${i}`) : noise(i)),
            );
            model.push({ seq: model.length + 1, record, name: record ? `e${i}` : `r${i}` });
          }
          const newest = (record: boolean) => model.filter((e) => e.record === record).slice(-size);
          const expected = [...newest(true), ...newest(false)]
            .sort((a, b) => a.seq - b.seq)
            .map(({ seq, name }) => ({ seq, name }));
          expect(readAll(trail, sql, now, 500)).toEqual(expected);
          expect(readAll(trail, sql, now, 2)).toEqual(expected);
        }),
        { numRuns: 60 },
      );
    });
  }, 60_000);
});
