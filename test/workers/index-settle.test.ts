// The index after a wake: the entry waits a settle window for the run that usually takes the
// resume, so an agent that claims within it costs the index one write (suspended → quiet) and never a
// `resuming` row; a slow agent is listed `resuming` once the window ends, and `overdue` after the
// claim timeout. Rows are counted by the object's own indexer (`writes`, `rowsWritten`).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { WAKE_SETTLE_MS } from "../../src/domain/index-entry";
import { tenantSessionStub } from "../../src/http/context";
import { SCHEMA_STATEMENTS } from "../../src/session-index/index-store";
import type { SessionLoop } from "../../src/session-object/loop";
import type { SessionObject } from "../../src/session-object/session-object";
import { complete, result, sleep, until } from "../support/api";
import { db, freshTenant, indexerOf, list, ok, rowOf, suspendedIn } from "../support/session-index";

/** What the indexer has written so far: D1 statements and the rows they wrote. */
const writesOf = async (stub: DurableObjectStub<SessionObject>) => {
  const indexer = await indexerOf(stub);
  return { writes: indexer.writes, rows: indexer.rowsWritten };
};

/** The session's resume as its view shows it (the RPC answer's type is not carried to a test). */
const resumeOf = async (stub: DurableObjectStub<SessionObject>) =>
  (ok(await stub.view()) as { resume: { resume_id: string; state: string; created_at: string } })
    .resume;

/** Reads the D1 row every 50 ms until `done` settles; returns every attention it held meanwhile. */
async function watchRow(tenant: string, sid: string, done: Promise<unknown>) {
  const seen = new Set<string | null>();
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  const look = async () => {
    const row = await rowOf(tenant, sid);
    seen.add(row === null ? "absent" : row.attention);
  };
  while (!finished) {
    await look();
    await sleep(50);
  }
  await look();
  return seen;
}

beforeAll(async () => {
  await db().batch(SCHEMA_STATEMENTS.map((statement) => db().prepare(statement)));
});

describe("the index after a wake", () => {
  it("a session whose agent claims a second after the webhook goes from suspended to quiet in one write of one row, and no resuming row is ever written", async () => {
    const tenant = freshTenant("claims");
    const { stub, tokens } = await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );
    const before = await writesOf(stub);

    const cycle = (async () => {
      expect((await complete("s", "h", tokens.h ?? "", result(0, "done"))).status).toBe(202);
      await until(async () => expect((await resumeOf(stub))?.state).toBe("delivered"));
      // An agent host takes a moment to start its agent: past the old 100 ms batch.
      await sleep(1_000);
      const resumeId = (await resumeOf(stub)).resume_id;
      ok(await stub.registerRun({ runId: null, resumeId }));
      // Past the window: a held entry would have gone out by now.
      await sleep(WAKE_SETTLE_MS + 1_000);
    })();
    const seen = await watchRow(tenant, "s", cycle);
    await cycle;

    expect([...seen].sort()).toEqual([null, "suspended"].sort());
    expect(await rowOf(tenant, "s")).toMatchObject({ attention: null, detail: null });
    // One statement, and D1 counts the row alone: leaving the partial indexes inserts no entry.
    expect(await writesOf(stub)).toEqual({ writes: before.writes + 1, rows: before.rows + 1 });
  }, 60_000);

  it("a session whose agent never claims is listed suspended within its window, resuming once it ends, and overdue after the claim timeout", async () => {
    const tenant = freshTenant("never-claims");
    const claimTimeoutMs = WAKE_SETTLE_MS + 5_000;
    const { stub, tokens } = await suspendedIn(tenant, "s");
    // A short claim timeout for this object only (the pool's is the 10 min default).
    await runInDurableObject(stub, (instance) => {
      // biome-ignore lint/complexity/useLiteralKeys: the loop is private to the class
      const loop: SessionLoop = instance["loop"];
      Object.assign(loop, { config: { ...loop.config, resumeClaimTimeoutMs: claimTimeoutMs } });
    });
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );

    expect((await complete("s", "h", tokens.h ?? "", result(0, "done"))).status).toBe(202);
    await until(async () => expect((await resumeOf(stub))?.state).toBe("delivered"));
    const createdAt = Date.parse((await resumeOf(stub)).created_at);

    // Inside the window the row still says suspended.
    while (Date.now() < createdAt + WAKE_SETTLE_MS - 500) {
      expect((await list(`tenant=${tenant}`)).sessions.map((s) => s.status)).toEqual(["suspended"]);
      await sleep(250);
    }
    // Once it ends, resuming, within the window and a few seconds' slack for a busy machine.
    await until(async () => {
      const { sessions, counts } = await list(`tenant=${tenant}&status=resuming`);
      expect(sessions).toMatchObject([
        { id: "s", status: "resuming", resume: { state: "delivered", attempts: 1 } },
      ]);
      expect(counts).toMatchObject({ suspended: 0, resuming: 1, overdue: 0 });
    }, 5_000);
    expect(Date.now()).toBeGreaterThanOrEqual(createdAt + WAKE_SETTLE_MS);
    // The alarm that would redeliver at the claim timeout is late: nothing moves the entry again.
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());

    await until(async () => {
      const { sessions, counts } = await list(`tenant=${tenant}&status=overdue`);
      expect(sessions).toMatchObject([{ id: "s", status: "overdue" }]);
      expect(counts).toMatchObject({ resuming: 0, overdue: 1 });
    }, claimTimeoutMs + 5_000);
  }, 60_000);

  it("a completion that leaves the session suspended moves no index entry: one write of one row", async () => {
    const tenant = freshTenant("staged");
    const { stub, tokens } = await suspendedIn(tenant, "s", { handles: ["a", "b"] });
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );
    const before = await writesOf(stub);
    expect((await complete("s", "a", tokens.a ?? "", result(0, "a done"))).status).toBe(202);
    await until(async () => {
      const [listed] = (await list(`tenant=${tenant}`)).sessions;
      expect(listed).toMatchObject({ status: "suspended", waiting_for: ["b"], inbox_pending: 1 });
    });
    expect(await writesOf(stub)).toEqual({ writes: before.writes + 1, rows: before.rows + 1 });
  }, 60_000);

  it("a resume that fails or has nowhere to go is written at once, without waiting for the window", async () => {
    const tenant = freshTenant("at-once");
    const failing = await suspendedIn(tenant, "failed", {
      resumeUrl: "http://not-allowed.test/hook",
    });
    const nowhere = await suspendedIn(tenant, "no-target", { resumeUrl: null });
    await until(async () => expect((await list(`tenant=${tenant}`)).counts.suspended).toBe(2));

    const sent = Date.now();
    await complete("failed", "h", failing.tokens.h ?? "", result(0, "x"));
    await complete("no-target", "h", nowhere.tokens.h ?? "", result(0, "x"));
    await until(async () => {
      expect(await rowOf(tenant, "failed")).toMatchObject({ attention: "failed" });
      expect(await rowOf(tenant, "no-target")).toMatchObject({ attention: "no_target" });
    }, WAKE_SETTLE_MS - 1_000);
    expect(Date.now() - sent).toBeLessThan(WAKE_SETTLE_MS);
  }, 60_000);

  it("an object restarted inside a wake's window still writes the resume once the window ends, and a cold object's wake and claim share one statement", async () => {
    const tenant = freshTenant("restart-window");
    const { stub, tokens } = await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );
    await complete("s", "h", tokens.h ?? "", result(0, "done"));
    const createdAt = Date.parse((await resumeOf(stub)).created_at);
    await runInDurableObject(stub, (_, state) => state.abort("restart for the test")).catch(
      () => undefined,
    );
    // The held flush died with the object; the reloaded one owes the index what it holds now.
    const reloaded = tenantSessionStub(env, tenant, "s");
    ok(await reloaded.view());
    await until(
      async () => expect(await rowOf(tenant, "s")).toMatchObject({ attention: "resuming" }),
      WAKE_SETTLE_MS + 5_000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(createdAt + WAKE_SETTLE_MS);

    // A second wake of a freshly loaded object: its load's resend and the wake share one write.
    const again = await suspendedIn(tenant, "cold");
    await until(async () =>
      expect(await rowOf(tenant, "cold")).toMatchObject({ attention: "suspended" }),
    );
    await runInDurableObject(again.stub, (_, state) => state.abort("restart for the test")).catch(
      () => undefined,
    );
    const cold = tenantSessionStub(env, tenant, "cold");
    await complete("cold", "h", again.tokens.h ?? "", result(0, "done"));
    await sleep(1_000);
    ok(await cold.registerRun({ runId: null, resumeId: null }));
    await until(async () => expect(await rowOf(tenant, "cold")).toMatchObject({ attention: null }));
    await sleep(WAKE_SETTLE_MS);
    expect(await writesOf(cold)).toEqual({ writes: 1, rows: 1 });
  }, 60_000);

  it("deleting a session inside a wake's window removes its row, and the held flush writes nothing after", async () => {
    const tenant = freshTenant("delete-window");
    const { stub, tokens } = await suspendedIn(tenant, "s");
    await until(async () => expect(await rowOf(tenant, "s")).not.toBeNull());
    await complete("s", "h", tokens.h ?? "", result(0, "done"));
    ok(await stub.remove());
    await until(async () => expect(await rowOf(tenant, "s")).toBeNull());
    await sleep(WAKE_SETTLE_MS + 500);
    expect(await rowOf(tenant, "s")).toBeNull();
    expect((await list(`tenant=${tenant}`)).sessions).toEqual([]);
  }, 60_000);
});
