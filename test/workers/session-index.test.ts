// The cross-session index: sessions that need attention, listed from D1 by status and
// tenant, updated after commits, and repaired from the session objects when an update is lost.
// Every test uses its own tenant (objects made over RPC), so counts never see another test's sessions.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { IndexEntry } from "../../src/domain/index-entry";
import { tenantSessionStub } from "../../src/http/context";
import { SCHEMA_STATEMENTS, upsertEntry } from "../../src/session-index/index-store";
import { call, complete, result, uniqueId, until } from "../support/api";
import { ACME_AGENT_TOKEN, AGENT_TOKEN } from "../support/secrets";
import {
  db,
  dropUpdates,
  freshTenant,
  indexerOf,
  list,
  OPERATOR,
  ok,
  restoreUpdates,
  rowOf,
  suspendedIn,
} from "../support/session-index";

beforeAll(async () => {
  await db().batch(SCHEMA_STATEMENTS.map((statement) => db().prepare(statement)));
});

describe("the session index", () => {
  it("a suspended session is listed with its wait, moves to resuming when its job completes, and leaves the list when a run takes the resume", async () => {
    const tenant = freshTenant("flow");
    const sid = uniqueId("flow");
    const { stub, tokens } = await suspendedIn(tenant, sid, { handles: ["a", "b"] });

    await until(async () => {
      const { sessions, counts } = await list(`tenant=${tenant}`);
      expect(sessions).toEqual([
        {
          tenant,
          id: sid,
          status: "suspended",
          session_status: "suspended",
          since: expect.any(String),
          ceiling_at: expect.any(String),
          overdue_at: expect.any(String),
          waiting_for: ["a", "b"],
          resume: null,
          inbox_pending: 0,
          indexed_at: expect.any(String),
        },
      ]);
      expect(counts).toEqual({ suspended: 1, resuming: 0, failed: 0, no_target: 0, overdue: 0 });
    });

    expect((await complete(sid, "a", tokens.a ?? "", result(0, "a done"))).status).toBe(202);
    await until(async () => {
      const [entry] = (await list(`tenant=${tenant}`)).sessions;
      expect(entry).toMatchObject({ status: "suspended", waiting_for: ["b"], inbox_pending: 1 });
    });

    expect((await complete(sid, "b", tokens.b ?? "", result(0, "b done"))).status).toBe(202);
    await until(async () => {
      const { sessions, counts } = await list(`tenant=${tenant}&status=resuming`);
      expect(sessions).toMatchObject([
        {
          id: sid,
          status: "resuming",
          session_status: "resuming",
          waiting_for: [],
          ceiling_at: null,
          resume: { state: "delivered", attempts: 1, last_error: null },
          inbox_pending: 2,
        },
      ]);
      expect(counts).toEqual({ suspended: 0, resuming: 1, failed: 0, no_target: 0, overdue: 0 });
    });

    ok(await stub.registerRun({ runId: null, resumeId: null }));
    await until(async () => {
      const { sessions, counts } = await list(`tenant=${tenant}`);
      expect(sessions).toEqual([]);
      expect(counts).toEqual({ suspended: 0, resuming: 0, failed: 0, no_target: 0, overdue: 0 });
      // The row stays, quiet, so its version still orders later updates.
      expect(await rowOf(tenant, sid)).toMatchObject({ attention: null, detail: null });
    });
  }, 30_000);

  it("each status lists its own sessions, the counts cover the tenant, and quiet sessions are not listed", async () => {
    const tenant = freshTenant("mix");
    const other = freshTenant("other");
    const name = (label: string) => `${label}-${tenant}`;
    await suspendedIn(tenant, name("suspended-1"));
    await suspendedIn(tenant, name("suspended-2"));
    await suspendedIn(other, name("elsewhere"));
    // Delivered to the recording host: resuming until a run takes it.
    const resuming = await suspendedIn(tenant, name("resuming"));
    await complete(name("resuming"), "h", resuming.tokens.h ?? "", result(0, "x"));
    // The origin is not allowlisted: the first attempt fails it for good.
    const failing = await suspendedIn(tenant, name("failed"), {
      resumeUrl: "http://not-allowed.test/hook",
    });
    await complete(name("failed"), "h", failing.tokens.h ?? "", result(0, "x"));
    // A named tenant without resume_url or its own webhook URL has nowhere to deliver.
    const nowhere = await suspendedIn(tenant, name("no-target"), { resumeUrl: null });
    await complete(name("no-target"), "h", nowhere.tokens.h ?? "", result(1, "x"));
    // Past its ceiling with the alarm gone (a late alarm): overdue.
    const late = await suspendedIn(tenant, name("overdue"), { ceilingMs: 1_000 });
    await runInDurableObject(late.stub, (_, state) => state.storage.deleteAlarm());
    // Running and idle sessions need no attention.
    const running = await suspendedIn(tenant, name("running"));
    ok(await running.stub.registerRun({ runId: null, resumeId: null }));
    ok(
      await tenantSessionStub(env, tenant, name("idle")).create({
        tenant,
        id: name("idle"),
        resumeUrl: null,
        metadata: {},
      }),
    );

    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const expected = {
      suspended: [name("suspended-1"), name("suspended-2")],
      resuming: [name("resuming")],
      failed: [name("failed")],
      no_target: [name("no-target")],
      overdue: [name("overdue")],
    };
    await until(async () => {
      for (const [status, ids] of Object.entries(expected)) {
        const { sessions, counts } = await list(`tenant=${tenant}&status=${status}`);
        expect([status, sessions.map((s) => s.id).sort()]).toEqual([status, [...ids].sort()]);
        expect(sessions.every((s) => s.status === status && s.tenant === tenant)).toBe(true);
        expect(counts).toEqual({ suspended: 2, resuming: 1, failed: 1, no_target: 1, overdue: 1 });
      }
    });
    const all = await list(`tenant=${tenant}`);
    expect(all.sessions.map((s) => [s.id, s.status]).sort()).toEqual(
      Object.entries(expected)
        .flatMap(([status, ids]) => ids.map((id) => [id, status]))
        .sort(),
    );
    const failed = (await list(`tenant=${tenant}&status=failed`)).sessions[0];
    expect(failed).toMatchObject({
      session_status: "idle",
      resume: { state: "failed", last_error: expect.stringContaining("RESUME_URL_ALLOWLIST") },
    });
    const overdue = (await list(`tenant=${tenant}&status=overdue`)).sessions[0];
    expect(overdue).toMatchObject({ session_status: "suspended", waiting_for: ["h"] });
    expect(Date.parse(overdue?.overdue_at)).toBeLessThanOrEqual(Date.now());
    // Without a tenant the other tenant's session is listed too.
    const everywhere = await list("status=suspended&limit=500");
    expect(everywhere.sessions.map((s) => s.id)).toContain(name("elsewhere"));
    expect(everywhere.counts.suspended).toBeGreaterThanOrEqual(3);
  }, 30_000);

  it("pages follow a cursor, oldest first, and list every session exactly once", async () => {
    const tenant = freshTenant("pages");
    const ids: string[] = [];
    for (let n = 0; n < 5; n += 1) {
      const sid = `page-${n}`;
      await suspendedIn(tenant, sid);
      ids.push(sid);
    }
    await until(async () => {
      expect((await list(`tenant=${tenant}`)).counts.suspended).toBe(5);
    });
    for (const status of ["suspended", ""]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await list(
          `tenant=${tenant}&status=${status}&limit=2${cursor === null ? "" : `&cursor=${cursor}`}`,
        );
        expect(page.sessions.length).toBeLessThanOrEqual(2);
        seen.push(...page.sessions.map((s) => s.id));
        cursor = page.next;
        pages += 1;
      } while (cursor !== null && pages < 10);
      expect([status, seen]).toEqual([status, ids]);
      expect(pages).toBe(3);
    }
  });

  it("an invalid query is a 422 problem, and only operator tokens may list", async () => {
    for (const query of [
      "status=idle",
      "status=running",
      "limit=0",
      "limit=501",
      "tenant=Acme",
      "cursor=not-a-cursor",
      "cursor=WyJ4Il0",
      "unknown=1",
    ]) {
      const answer = await call("GET", `/v1/ops/sessions?${query}`, { token: OPERATOR });
      expect([query, answer.status, answer.body.code]).toEqual([query, 422, "invalid_request"]);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
    }
    for (const token of [AGENT_TOKEN, ACME_AGENT_TOKEN, null]) {
      const answer = await call("GET", "/v1/ops/sessions", { token });
      expect([token, answer.status]).toEqual([token, 401]);
    }
    // A blank filter means no filter.
    expect(
      (await call("GET", "/v1/ops/sessions?tenant=&status=", { token: OPERATOR })).status,
    ).toBe(200);
  });

  it("deleting a session deletes its row", async () => {
    const tenant = freshTenant("delete");
    const { stub } = await suspendedIn(tenant, "doomed");
    await until(async () => expect(await rowOf(tenant, "doomed")).not.toBeNull());
    ok(await stub.remove());
    await until(async () => expect(await rowOf(tenant, "doomed")).toBeNull());
    expect((await list(`tenant=${tenant}`)).sessions).toEqual([]);
  });
});

describe("index updates are ordered and idempotent", () => {
  const entry = (sid: string, waitingFor: string[]): IndexEntry => ({
    tenant: "versions",
    id: sid,
    attention: "suspended",
    since: 1_000,
    overdueAt: Date.now() + 3_600_000,
    detail: {
      session_status: "suspended",
      ceiling_at: Date.now() + 3_600_000,
      waiting_for: waitingFor,
      resume: null,
      inbox_pending: 0,
    },
  });

  it("an older version arriving late never overwrites a newer one, and the same entry again writes nothing", async () => {
    const sid = uniqueId("versions");
    const newer = entry(sid, ["b"]);
    expect(await upsertEntry(db(), newer, 20, Date.now())).toBeGreaterThan(0);
    expect(await upsertEntry(db(), entry(sid, ["a", "b"]), 10, Date.now())).toBe(0);
    expect(JSON.parse((await rowOf("versions", sid))?.detail ?? "null").waiting_for).toEqual(["b"]);
    expect(await rowOf("versions", sid)).toMatchObject({ version: 20 });
    expect(await upsertEntry(db(), newer, 30, Date.now())).toBe(0);
    expect(await upsertEntry(db(), entry(sid, []), 31, Date.now())).toBeGreaterThan(0);
    expect(await rowOf("versions", sid)).toMatchObject({ version: 31 });
  });

  it("an entry whose status, since and overdue time are what the row holds writes the row alone, and one the row does not hold writes the whole entry", async () => {
    const sid = uniqueId("keys");
    const listed = entry(sid, ["a", "b"]);
    // The same keys as `listed` (the helper's overdue time moves with the clock).
    const keyed = (waitingFor: string[]): IndexEntry => ({
      ...entry(sid, waitingFor),
      overdueAt: listed.overdueAt,
    });
    // The row, its two attention entries and its two overdue entries.
    expect(await upsertEntry(db(), listed, 10, Date.now())).toBe(5);
    // Only the detail moves: no index entry is rewritten.
    expect(await upsertEntry(db(), keyed(["b"]), 11, Date.now(), listed)).toBe(1);
    expect(JSON.parse((await rowOf("versions", sid))?.detail ?? "null").waiting_for).toEqual(["b"]);
    // A row that moved meanwhile (here: deleted, as a repair would) is written whole.
    await db()
      .prepare("DELETE FROM session_index WHERE tenant = ?1 AND session_id = ?2")
      .bind("versions", sid)
      .run();
    expect(await upsertEntry(db(), keyed([]), 12, Date.now(), listed)).toBe(5);
    expect(await rowOf("versions", sid)).toMatchObject({ attention: "suspended", version: 12 });
    // And an older version never lands, by either road.
    expect(await upsertEntry(db(), keyed(["z"]), 11, Date.now(), keyed([]))).toBe(0);
    expect(JSON.parse((await rowOf("versions", sid))?.detail ?? "null").waiting_for).toEqual([]);
  });

  it("a quiet entry for a session the index never listed writes no row", async () => {
    const sid = uniqueId("quiet");
    const quiet: IndexEntry = {
      tenant: "versions",
      id: sid,
      attention: null,
      since: null,
      overdueAt: null,
      detail: null,
    };
    expect(await upsertEntry(db(), quiet, 10, Date.now())).toBe(0);
    expect(await rowOf("versions", sid)).toBeNull();
  });
});

describe("the index is repaired when an update is lost", () => {
  it("a dropped update is sent again by the object's alarm, with backoff, once the index takes writes", async () => {
    const tenant = freshTenant("alarm");
    const { stub } = await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );

    await dropUpdates(stub);
    await stub.registerRun({ runId: null, resumeId: null });
    // The object owes the index an update and has armed its alarm for it.
    await until(async () => expect((await indexerOf(stub)).retryAt).not.toBeNull());
    const owed = (await indexerOf(stub)).retryAt ?? 0;
    await until(async () =>
      expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBe(owed),
    );
    expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" });
    expect((await list(`tenant=${tenant}`)).counts.suspended).toBe(1);

    // A retry that fails again backs off further.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, owed - Date.now())));
    await runInDurableObject(stub, (instance) => instance.alarm?.());
    const later = (await indexerOf(stub)).retryAt ?? 0;
    expect(later - owed).toBeGreaterThanOrEqual(1_000);

    await restoreUpdates(stub);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, later - Date.now())));
    await runInDurableObject(stub, (instance) => instance.alarm?.());
    expect(await rowOf(tenant, "s")).toMatchObject({ attention: null });
    expect((await indexerOf(stub)).retryAt).toBeNull();
    expect((await list(`tenant=${tenant}`)).sessions).toEqual([]);
  });

  it("an object that restarts with a lost update sends its entry again on load", async () => {
    const tenant = freshTenant("restart");
    const { stub, tokens } = await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );

    await dropUpdates(stub);
    expect((await complete("s", "h", tokens.h ?? "", result(0, "done"))).status).toBe(202);
    await until(async () => expect((await indexerOf(stub)).retryAt).not.toBeNull());
    expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" });

    // The restart loses the object's memory: its retry time and the failing writer with it.
    await runInDurableObject(stub, (_, state) => state.abort("restart for the test")).catch(
      () => undefined,
    );
    // A stub whose object was aborted stays broken: the next one reaches the reloaded object.
    ok(await tenantSessionStub(env, tenant, "s").view());
    await until(async () => {
      const row = await rowOf(tenant, "s");
      expect(row).toMatchObject({ attention: "resuming" });
      expect(JSON.parse(row?.detail ?? "null")).toMatchObject({
        waiting_for: [],
        inbox_pending: 1,
      });
    });
  }, 30_000);

  it("the list checks a stale-looking row against its object, lists the truth, and fixes the row", async () => {
    const tenant = freshTenant("on-read");
    const { stub } = await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );
    const suspended = await rowOf(tenant, "s");
    ok(await stub.registerRun({ runId: null, resumeId: null }));
    // The object sends its quiet entry and then owes the index nothing: from here only the list's
    // check can mend the row (a write still owed would race the list, and win on a slow machine).
    await until(async () => expect(await rowOf(tenant, "s")).toMatchObject({ attention: null }));
    expect((await indexerOf(stub)).retryAt).toBeNull();
    // The update is lost after all: the row says suspended again, its ceiling passed, as if the
    // object never acted. Its version stays the object's last, so the object's next write lands.
    await db()
      .prepare(
        `UPDATE session_index SET attention = ?3, since = ?4, overdue_at = ?5, detail = ?6
         WHERE tenant = ?1 AND session_id = ?2`,
      )
      .bind(tenant, "s", "suspended", suspended?.since, Date.now() - 1_000, suspended?.detail)
      .run();

    const { sessions, counts } = await list(`tenant=${tenant}&status=overdue`);
    // The count is the index's; the listed entry is the object's, and it needs no attention.
    expect(counts.overdue).toBe(1);
    expect(sessions).toEqual([]);
    await until(async () => expect(await rowOf(tenant, "s")).toMatchObject({ attention: null }));
    expect((await list(`tenant=${tenant}`)).counts.overdue).toBe(0);
  });

  it("a row left behind by a deleted session is dropped from the list and from the index", async () => {
    const tenant = freshTenant("ghost");
    const ghost: IndexEntry = {
      tenant,
      id: "gone",
      attention: "suspended",
      since: Date.now() - 10_000,
      overdueAt: Date.now() - 1_000,
      detail: {
        session_status: "suspended",
        ceiling_at: Date.now() - 1_000,
        waiting_for: ["h"],
        resume: null,
        inbox_pending: 0,
      },
    };
    await upsertEntry(db(), ghost, 1, Date.now());
    const { sessions } = await list(`tenant=${tenant}`);
    expect(sessions).toEqual([]);
    expect(await rowOf(tenant, "gone")).toBeNull();
  });
});
