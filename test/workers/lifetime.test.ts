import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  call,
  complete,
  createSession,
  deliveries,
  reserve,
  result,
  stubOf,
  uniqueId,
  view,
} from "../support/api";

describe("session lifetimes", () => {
  it("a re-created session never receives a completion of the old lifetime", async () => {
    const sid = uniqueId("recreate");
    await createSession(sid);
    const old = await reserve(sid, "h1");
    expect((await call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect((await call("GET", `/v1/sessions/${sid}`)).status).toBe(404);

    const fresh = await createSession(sid);
    expect(fresh.lifetime).not.toBe(old.job.lifetime);
    await reserve(sid, "h1");
    const before = await view(sid);

    const stale = await complete(sid, "h1", old.callback.token, result(0, "stale"));
    expect(stale.status).toBe(410);
    expect(stale.headers.get("content-type")).toBe("application/problem+json");
    expect(stale.body.code).toBe("lifetime_ended");
    expect(await view(sid)).toEqual(before);
    expect((await view(sid)).inbox).toEqual({ pending: 0, claimed: 0, generation: 0 });
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.status).toBe("running");
    expect(await deliveries(sid)).toEqual([]);
  });

  it("a completion for a deleted session is refused with lifetime_ended", async () => {
    const sid = uniqueId("deleted");
    await createSession(sid);
    const old = await reserve(sid, "h1");
    await call("DELETE", `/v1/sessions/${sid}`);
    const stale = await complete(sid, "h1", old.callback.token, result(0, "x"));
    expect(stale.status).toBe(410);
    expect(stale.body.code).toBe("lifetime_ended");
    expect((await call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
  });

  it("deleting a session ends all its state: jobs, inbox and timers", async () => {
    const sid = uniqueId("wipe");
    await createSession(sid);
    const job = await reserve(sid, "h1");
    await complete(sid, "h1", job.callback.token, result(0, "x"));
    await call("POST", `/v1/sessions/${sid}/messages`, { body: { role: "user", content: "hi" } });
    expect((await call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    // The object keeps no storage at all for the ended lifetime: no table, no row, no alarm.
    await runInDurableObject(stubOf(sid), async (_, state) => {
      const tables = state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'")
        .toArray();
      expect(tables).toEqual([]);
      expect(await state.storage.getAlarm()).toBeNull();
    });
    expect((await call("DELETE", `/v1/sessions/${sid}`)).status).toBe(404);
    expect((await call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
    await createSession(sid);
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body).toEqual({
      jobs: [],
      next: null,
    });
    expect((await view(sid)).message_count).toBe(0);
    expect((await call("GET", `/v1/sessions/${sid}/inbox`)).body).toEqual({
      pending: 0,
      claimed: 0,
      acked: 0,
      generation: 0,
    });
  });

  it("creating an existing session is a session_exists conflict and changes nothing", async () => {
    const sid = uniqueId("exists");
    const first = await createSession(sid);
    const again = await call("POST", "/v1/sessions", { body: { id: sid } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("session_exists");
    expect((await view(sid)).lifetime).toBe(first.lifetime);
  });
});
