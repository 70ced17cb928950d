import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

describe("session lifetimes", () => {
  it("a re-created session never receives a completion of the old lifetime", async () => {
    const sid = api.uniqueId("recreate");
    await api.createSession(sid);
    const old = await api.reserve(sid, "h1");
    expect((await api.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect((await api.call("GET", `/v1/sessions/${sid}`)).status).toBe(404);

    const fresh = await api.createSession(sid);
    expect(fresh.lifetime).not.toBe(old.job.lifetime);
    await api.reserve(sid, "h1");
    const before = await api.view(sid);

    const stale = await api.complete(sid, "h1", old.callback.token, api.result(0, "stale"));
    expect(stale.status).toBe(410);
    expect(stale.headers.get("content-type")).toBe("application/problem+json");
    expect(stale.body.code).toBe("lifetime_ended");
    expect(await api.view(sid)).toEqual(before);
    expect((await api.view(sid)).inbox).toEqual({ pending: 0, claimed: 0, generation: 0 });
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.status).toBe("running");
    expect(await api.deliveries(sid)).toEqual([]);
  });

  it("a completion for a deleted session is refused with lifetime_ended", async () => {
    const sid = api.uniqueId("deleted");
    await api.createSession(sid);
    const old = await api.reserve(sid, "h1");
    await api.call("DELETE", `/v1/sessions/${sid}`);
    const stale = await api.complete(sid, "h1", old.callback.token, api.result(0, "x"));
    expect(stale.status).toBe(410);
    expect(stale.body.code).toBe("lifetime_ended");
    expect((await api.call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
  });

  it("deleting a session ends all its state: jobs, inbox and timers", async () => {
    const sid = api.uniqueId("wipe");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    await api.complete(sid, "h1", job.callback.token, api.result(0, "x"));
    await api.call("POST", `/v1/sessions/${sid}/messages`, {
      body: { role: "user", content: "hi" },
    });
    expect((await api.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    // The object keeps no storage at all for the ended lifetime: no table, no row, no alarm.
    await runInDurableObject(api.stubOf(sid), async (_, state) => {
      const tables = state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'")
        .toArray();
      expect(tables).toEqual([]);
      expect(await state.storage.getAlarm()).toBeNull();
    });
    expect((await api.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(404);
    expect((await api.call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
    await api.createSession(sid);
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs`)).body).toEqual({
      jobs: [],
      next: null,
    });
    expect((await api.view(sid)).message_count).toBe(0);
    expect(await api.inboxCounts(sid)).toEqual({ pending: 0, claimed: 0, acked: 0, generation: 0 });
  });

  it("creating an existing session is a session_exists conflict and changes nothing", async () => {
    const sid = api.uniqueId("exists");
    const first = await api.createSession(sid);
    const again = await api.call("POST", "/v1/sessions", { body: { id: sid } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("session_exists");
    expect((await api.view(sid)).lifetime).toBe(first.lifetime);
  });
});
