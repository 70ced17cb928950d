// The wake's settle window under faults and operators (docs/design/index.md): a restart inside it,
// a read that fails at its end, and the operator's actions, which are never held.
import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { WAKE_SETTLE_MS } from "../../src/domain/index-entry";
import { SCHEMA_STATEMENTS } from "../../src/session-index/index-store";
import { call, complete, result, scriptHost, sleep, until } from "../support/api";
import {
  db,
  freshTenant,
  indexerIn,
  list,
  OPERATOR,
  ok,
  rowOf,
  suspendedIn,
} from "../support/session-index";

beforeAll(async () => {
  await db().batch(SCHEMA_STATEMENTS.map((statement) => db().prepare(statement)));
});

describe("the index after a wake, when things go wrong", () => {
  it("an object restarted inside the window, and not touched again, is listed resuming once the window ends", async () => {
    const tenant = freshTenant("rv-restart");
    const { stub, tokens } = await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );
    expect((await complete("s", "h", tokens.h ?? "", result(0, "done"))).status).toBe(202);
    const view = ok(await stub.view()) as { resume: { state: string; created_at: string } };
    const createdAt = Date.parse(view.resume.created_at);
    await until(async () =>
      expect((ok(await stub.view()) as { resume: { state: string } }).resume.state).toBe(
        "delivered",
      ),
    );
    // The process restarts (a deploy) inside the window: the in-memory hold dies with it.
    await runInDurableObject(stub, (_, state) => state.abort("restart for the test")).catch(
      () => undefined,
    );
    // Nobody touches the object again (the agent host got its webhook and is slow, or crashed).
    // The operators' bound (docs/operators.md): `resuming` once the 5 s window ends.
    await sleep(Math.max(0, createdAt + WAKE_SETTLE_MS + 5_000 - Date.now()));
    const resuming = await list(`tenant=${tenant}&status=resuming`);
    const suspended = await list(`tenant=${tenant}&status=suspended`);
    // The object's alarm, armed for the window's end with the wake's own commit, wrote it.
    expect((await rowOf(tenant, "s"))?.attention).toBe("resuming");
    expect(suspended.sessions).toEqual([]);
    expect(resuming.sessions.map((s) => s.id)).toEqual(["s"]);
  }, 60_000);

  it("a woken session nobody claims is listed resuming by its live object's timer, and its alarm does not fire for it", async () => {
    const tenant = freshTenant("unclaimed");
    const { stub, tokens } = await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );
    const alarms = () =>
      runInDurableObject(stub, (instance) => {
        // biome-ignore lint/complexity/useLiteralKeys: the loop is private to the class
        return instance["loop"].scheduler.alarms;
      });
    const before = await alarms();
    expect((await complete("s", "h", tokens.h ?? "", result(0, "done"))).status).toBe(202);
    const view = ok(await stub.view()) as { resume: { created_at: string } };
    // Past the window and the 2 s the alarm waits after it as the fallback.
    await sleep(
      Math.max(0, Date.parse(view.resume.created_at) + WAKE_SETTLE_MS + 3_500 - Date.now()),
    );
    expect((await rowOf(tenant, "s"))?.attention).toBe("resuming");
    // The timer moved the alarm on to the claim timeout: an unclaimed wake costs no invocation.
    expect(await alarms()).toBe(before);
  }, 60_000);

  it("an operator's redeliver is listed within the 100 ms batch (only a wake waits)", async () => {
    const tenant = freshTenant("rv-redeliver");
    const key = `${tenant}-s`;
    await scriptHost(key, [503, 503, 503, 503]);
    const { stub, tokens } = await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );
    await complete("s", "h", tokens.h ?? "", result(0, "x"));
    await until(
      async () =>
        expect((ok(await stub.view()) as { resume: { state: string } }).resume.state).toBe(
          "failed",
        ),
      20_000,
    );
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "failed" }),
    );
    const redelivered = await call("POST", `/v1/ops/sessions/${tenant}/s/redeliver`, {
      token: OPERATOR,
    });
    expect(redelivered.status).toBe(200);
    const at = Date.now();
    await until(async () =>
      expect((ok(await stub.view()) as { resume: { state: string } }).resume.state).toBe(
        "delivered",
      ),
    );
    // Well past the 100 ms batch, well inside the 5 s window.
    await sleep(Math.max(0, at + 2_000 - Date.now()));
    const failed = await list(`tenant=${tenant}&status=failed`);
    // The session view says delivered; the list must not still offer it as failed.
    expect(failed.sessions).toEqual([]);
    expect(failed.counts.failed).toBe(0);
  }, 60_000);

  it("an entry that could not be read at the held flush (SQLITE_NOMEM, say) is read again by the alarm, not dropped until the next commit", async () => {
    const tenant = freshTenant("rv-throw");
    const { stub, tokens } = await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );
    // One read of the entry fails, as a statement does when the process's SQLite heap is full.
    await runInDurableObject(stub, (instance) => {
      const indexer = indexerIn(instance);
      const real = indexer.entryNow.bind(indexer);
      let failed = false;
      indexer.entryNow = () => {
        if (!failed) {
          failed = true;
          throw new Error("SQLITE_NOMEM (injected by the review)");
        }
        return real();
      };
    });
    expect((await complete("s", "h", tokens.h ?? "", result(0, "done"))).status).toBe(202);
    await sleep(WAKE_SETTLE_MS + 3_000);
    // The failed read was retried by the object's alarm, like a failed write: the row is current.
    expect(await rowOf(tenant, "s")).toMatchObject({ attention: "resuming" });
  }, 60_000);

  it("an operator's expire-wait is listed within the 100 ms batch, not as still suspended", async () => {
    const tenant = freshTenant("rv-expire");
    await suspendedIn(tenant, "s");
    await until(async () =>
      expect(await rowOf(tenant, "s")).toMatchObject({ attention: "suspended" }),
    );
    const expired = await call("POST", `/v1/ops/sessions/${tenant}/s/expire-wait`, {
      token: OPERATOR,
    });
    expect(expired.status).toBe(200);
    await sleep(2_000);
    const suspended = await list(`tenant=${tenant}&status=suspended`);
    expect(suspended.sessions).toEqual([]);
  }, 60_000);
});
