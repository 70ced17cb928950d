import { describe, expect, it } from "vitest";
import * as api from "../support/api";

describe("a completion during an active human conversation", () => {
  it("clears the wait, keeps status running and every message, queues one envelope, wakes the run and launches nothing", async () => {
    const sid = api.uniqueId("human");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    const humanRun = await api.registerRun(sid);
    const appended = await api.call("POST", `/v1/sessions/${sid}/messages`, {
      body: { role: "user", content: "are you still there?", metadata: { ui: "web" } },
    });
    expect(appended.status).toBe(201);
    expect(appended.body).toEqual({ index: 0 });
    const before = await api.view(sid);
    expect(before.status).toBe("running");
    expect(before.waiting_for_bash).not.toBeNull();

    const poll = api.call(
      "GET",
      `/v1/sessions/${sid}/runs/${humanRun}/notifications?after=${before.notify_seq}&wait_ms=20000`,
    );
    const accepted = await api.complete(sid, "h1", tokens.h1!, api.result(0, "done"));
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({
      outcome: "accepted",
      disposition: "active_run_notified",
    });

    const woken = await poll;
    expect(woken.status).toBe(200);
    expect(woken.body).toEqual({ notify_seq: before.notify_seq + 1, pending: 1 });

    const after = await api.view(sid);
    expect(after.status).toBe("running");
    expect(after.run.run_id).toBe(humanRun);
    expect(after.waiting_for_bash).toBeNull();
    expect(after.suspension).toBeNull();
    expect(after.metadata).toEqual({});
    expect(after.message_count).toBe(before.message_count);
    expect(after.inbox).toEqual({ pending: 1, claimed: 0, generation: 1 });
    expect(after.resume).toBeNull();
    expect(await api.deliveries(sid)).toEqual([]);
  });

  it("a notifications poll answers at once when notify_seq is already past `after`, and after wait_ms otherwise", async () => {
    const sid = api.uniqueId("poll");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    const runId = await api.registerRun(sid);
    const idle = await api.call(
      "GET",
      `/v1/sessions/${sid}/runs/${runId}/notifications?after=0&wait_ms=50`,
    );
    expect(idle.body).toEqual({ notify_seq: 0, pending: 0 });
    await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"));
    const ready = await api.call(
      "GET",
      `/v1/sessions/${sid}/runs/${runId}/notifications?after=0&wait_ms=30000`,
    );
    expect(ready.body).toEqual({ notify_seq: 1, pending: 1 });
    const stale = await api.call("GET", `/v1/sessions/${sid}/runs/other-run/notifications?after=0`);
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe("invalid_transition");
  });

  it("a run registered over an armed wait leaves the wait armed and finishing it suspends again", async () => {
    const sid = api.uniqueId("rearm");
    await api.suspendedOn(sid, ["h1"]);
    const humanRun = await api.registerRun(sid);
    expect((await api.view(sid)).waiting_for_bash.handles).toEqual(["h1"]);
    const finished = await api.call("POST", `/v1/sessions/${sid}/runs/${humanRun}/finish`);
    expect(finished.status).toBe(200);
    expect(finished.body.status).toBe("suspended");
    expect(finished.body.metadata.runtime).toEqual({
      suspend_reason: "waiting_for_bash",
      background_exec_id: "h1",
    });
  });
});
