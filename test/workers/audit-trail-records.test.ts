// Review of the records ring (docs/decisions.md 710–714): operator actions, ceilings and cancels
// are records, noise is windowed by its own ring, a rolled-back append leaves no hole, and records
// written before migration 10 are kept. AUDIT_MAX_EVENTS is 40 in the pool.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../src/domain/audit";
import type { Core } from "../../src/domain/decision";
import { AuditStore } from "../../src/session-object/audit-store";
import { MIGRATIONS, migrate, prepareSchema } from "../../src/session-object/migrations";
import type { Store } from "../../src/session-object/store/store";
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

describe("the records ring", () => {
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

const accepted = (handle: string): AuditEvent =>
  ({ type: "completion", handle, outcome: "accepted", disposition: "queued" }) as AuditEvent;
const noise = (i: number): AuditEvent =>
  ({ type: "run_registered", run_id: `r${i}`, resume_id: null }) as AuditEvent;

describe("the noise ring", () => {
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

  it("keeps the newest AUDIT_MAX_EVENTS noise events readable between records, paged in seq order", async () => {
    await runInDurableObject(api.stubOf(api.uniqueId("noise-window")), (_, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => prepareSchema(sql));
      const now = Date.now();
      const store = new AuditStore({ auditMaxEvents: 40, auditRetentionMs: 60_000 });
      for (let i = 0; i < 100; i += 1) {
        store.append(sql, now, i % 2 === 0 ? noise(i) : accepted(`h${i}`));
      }
      const seen: number[] = [];
      let after = 0;
      for (;;) {
        const page = store.page(sql, now, { after, limit: 9 });
        seen.push(...page.events.map((e) => e.seq));
        if (page.next_after === null) break;
        after = page.next_after;
      }
      // The newest 40 of each ring: seqs 21..100.
      expect(seen).toEqual(Array.from({ length: 80 }, (_, i) => i + 21));
    });
  });
});

describe("records written before migration 10", () => {
  it("are moved to the records ring and survive a flood of noise within the retention", async () => {
    await runInDurableObject(api.stubOf(api.uniqueId("ring-old")), (_, state) => {
      const sql = state.storage.sql;
      migrate(
        sql,
        MIGRATIONS.filter((m) => m.id < 10),
      );
      const now = Date.now();
      const old: [number, string, object][] = [
        [38, "completion", { handle: "old", outcome: "accepted", disposition: "resume_scheduled" }],
        [39, "operator", { action: "mark_lost", handle: "gone" }],
        [40, "claim", { count: 0, ids: [] }],
        [41, "completion", { handle: "old", outcome: "refused", reason: "mismatch" }],
        [42, "cancel", { handle: "c" }],
      ];
      for (const [seq, type, detail] of old) {
        sql.exec(
          "INSERT INTO audit (slot, seq, at, type, detail) VALUES (?, ?, ?, ?, ?)",
          seq % 40,
          seq,
          now,
          type,
          JSON.stringify(detail),
        );
      }
      migrate(sql);
      const store = new AuditStore({ auditMaxEvents: 40, auditRetentionMs: 60_000 });
      const before = store.page(sql, now, { after: 0, limit: 500 }).events;
      expect(before.map((e) => [e.seq, e.type])).toEqual([
        [38, "completion"],
        [39, "operator"],
        [40, "claim"],
        [41, "completion"],
        [42, "cancel"],
      ]);
      for (let i = 0; i < 100; i += 1) store.append(sql, now, noise(i));
      store.append(sql, now, accepted("new"));
      const all = store.page(sql, now, { after: 0, limit: 500 }).events;
      const records = all.filter((e) => e.type !== "run_registered");
      expect(records.map((e) => [e.seq, e.type])).toEqual([
        [38, "completion"],
        [39, "operator"],
        [42, "cancel"],
        [143, "completion"],
      ]);
      expect(all.filter((e) => e.type === "run_registered")).toHaveLength(40);
    });
  });
});

describe("a transaction that rolls back", () => {
  it("leaves no hole that hides older records: the counters are read again", async () => {
    await runInDurableObject(api.stubOf(api.uniqueId("ring-hole")), (_, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => prepareSchema(sql));
      const now = Date.now();
      const store = new AuditStore({ auditMaxEvents: 40, auditRetentionMs: 60_000 });
      for (let i = 1; i <= 4; i += 1) {
        state.storage.transactionSync(() => store.append(sql, now, accepted(`h${i}`)));
      }
      expect(() =>
        state.storage.transactionSync(() => {
          store.append(sql, now, accepted("rolled-back"));
          store.append(sql, now, noise(0));
          throw new Error("out of memory: SQLITE_NOMEM");
        }),
      ).toThrow();
      store.reload();
      for (let i = 6; i <= 10; i += 1) {
        state.storage.transactionSync(() => store.append(sql, now, accepted(`h${i}`)));
      }
      const page = store.page(sql, now, { after: 0, limit: 100 });
      expect(page.events.map((e) => [e.seq, (e as { handle?: string }).handle])).toEqual([
        [1, "h1"],
        [2, "h2"],
        [3, "h3"],
        [4, "h4"],
        [5, "h6"],
        [6, "h7"],
        [7, "h8"],
        [8, "h9"],
        [9, "h10"],
      ]);
    });
  });

  it("through the kernel: a commit whose transaction throws leaves the records before it readable", async () => {
    const sid = api.uniqueId("kernel-hole");
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
      for (let i = 1; i <= 4; i += 1) kernel.record(accepted(`h${i}`));
      // The second event breaks the noise ring's CHECK: the transaction rolls the first back.
      expect(() =>
        kernel.commit(
          null,
          [],
          [accepted("rolled-back"), { type: "bogus" } as unknown as AuditEvent],
        ),
      ).toThrow();
      for (let i = 6; i <= 10; i += 1) kernel.record(accepted(`h${i}`));
      const page = kernel.audit.page(state.storage.sql, Date.now(), { after: 0, limit: 100 });
      expect(page.events.map((e) => (e as { handle?: string }).handle)).toEqual([
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
