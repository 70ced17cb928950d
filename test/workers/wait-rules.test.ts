import { describe, expect, it } from "vitest";
import * as api from "../support/api";

describe("wait rules over HTTP", () => {
  it("a completion that arrives before the suspend is stored, and the suspend wakes at once", async () => {
    const sid = api.uniqueId("early");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    const runId = await api.registerRun(sid);
    const early = await api.complete(sid, "h1", job.callback.token, api.result(0, "fast"));
    expect(early.body.disposition).toBe("active_run_notified");
    const suspended = await api.suspend(sid, runId, ["h1"]);
    expect(suspended.status).toBe(200);
    expect(suspended.body.status).toBe("resuming");
    expect(suspended.body.waiting_for_bash).toBeNull();
    expect(suspended.body.resume.reason).toBe("background_exec_completed");
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
  });

  it("`all` stages the first of two completions and wakes once on the second", async () => {
    const sid = api.uniqueId("all");
    const { tokens } = await api.suspendedOn(sid, ["a", "b"], { wake: "all" });
    const first = await api.complete(sid, "a", tokens.a!, api.result(0, "a"));
    expect(first.body.disposition).toBe("staged");
    const staged = await api.view(sid);
    expect(staged.status).toBe("suspended");
    expect(staged.waiting_for_bash.handles).toEqual(["b"]);
    expect(staged.metadata.runtime.background_exec_id).toBe("b");
    const second = await api.complete(sid, "b", tokens.b!, api.result(0, "b"));
    expect(second.body.disposition).toBe("resume_scheduled");
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    expect(JSON.parse((await api.deliveries(sid))[0]!.body).inbox.pending).toBe(2);
  });

  it("`any` wakes on the first completion and queues the second into the same resume", async () => {
    const sid = api.uniqueId("any");
    const { tokens } = await api.suspendedOn(sid, ["a", "b"], { wake: "any" });
    expect((await api.complete(sid, "a", tokens.a!, api.result(0, "a"))).body.disposition).toBe(
      "resume_scheduled",
    );
    expect((await api.complete(sid, "b", tokens.b!, api.result(0, "b"))).body.disposition).toBe(
      "queued",
    );
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await api.deliveries(sid)).toHaveLength(1);
    expect((await api.claim(sid)).body.claims).toHaveLength(2);
  });

  it("a run that finishes with unclaimed items wakes the session once with inbox_pending", async () => {
    const sid = api.uniqueId("finish");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    const runId = await api.registerRun(sid);
    await api.complete(sid, "h1", job.callback.token, api.result(0, "x"));
    const finished = await api.call("POST", `/v1/sessions/${sid}/runs/${runId}/finish`);
    expect(finished.status).toBe(200);
    expect(finished.body.status).toBe("resuming");
    expect(finished.body.resume.reason).toBe("inbox_pending");
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    expect(JSON.parse((await api.deliveries(sid))[0]!.body).reason).toBe("inbox_pending");
  });

  it("a run that finishes with nothing unclaimed goes idle and wakes nobody", async () => {
    const sid = api.uniqueId("finish-idle");
    await api.createSession(sid);
    const runId = await api.registerRun(sid);
    const finished = await api.call("POST", `/v1/sessions/${sid}/runs/${runId}/finish`);
    expect(finished.body.status).toBe("idle");
    expect(finished.body.resume).toBeNull();
    expect(await api.deliveries(sid)).toEqual([]);
  });
});
