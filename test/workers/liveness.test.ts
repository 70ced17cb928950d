// Liveness through the real Worker and session object (contract §9): heartbeats and their
// answers, progress on the pull and the summary, silence that makes a job lost, and cancel.
// A deadline is moved into the past in storage (the object restarted to read it), so no test
// waits out a timeout; the grace is the service start that the test sets the runner's last
// word before.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

const beat = (sid: string, handle: string, token: string, body?: unknown) =>
  api.call("POST", `/v1/sessions/${sid}/exec-jobs/${handle}/heartbeat`, {
    token,
    ...(body === undefined ? {} : { body }),
  });

const reserveWith = (sid: string, handle: string, body: Record<string, unknown> = {}) =>
  api.call("POST", `/v1/sessions/${sid}/exec-jobs`, {
    body: { handle, command: `run ${handle}`, ...body },
  });

const pull = async (sid: string, handle: string) =>
  (await api.call("GET", `/v1/sessions/${sid}/exec-jobs/${handle}`)).body;

/**
 * Makes the job's deadline (and the session's earliest one) pass now, as if its timeout had gone
 * by in silence; `heardAt` sets when its runner was last heard (reservation and heartbeat).
 */
async function silentPastDeadline(sid: string, handle: string, heardAt?: number) {
  await runInDurableObject(api.stubOf(sid), (_, state) => {
    const sql = state.storage.sql;
    const past = Date.now() - 1;
    sql.exec("UPDATE jobs SET deadline_at = ? WHERE handle = ?", past, handle);
    if (heardAt !== undefined) {
      sql.exec(
        "UPDATE jobs SET reserved_at = ?, last_heartbeat_at = NULL WHERE handle = ?",
        heardAt,
        handle,
      );
    }
    sql.exec("UPDATE session SET liveness_due_at = ?", past);
  });
  await abortAllDurableObjects();
}

describe("liveness: a runner that vanishes is noticed", () => {
  it("a reservation with heartbeat_timeout_ms gets a heartbeat url and shows its timeout; another timeout for the same job is a conflict", async () => {
    const sid = api.uniqueId("hb-reserve");
    await api.createSession(sid);
    const reserved = await reserveWith(sid, "h1", { heartbeat_timeout_ms: 30_000 });
    expect(reserved.status).toBe(201);
    expect(reserved.body.callback).toMatchObject({
      heartbeat_url: expect.stringMatching(`/v1/sessions/${sid}/exec-jobs/h1/heartbeat$`),
      heartbeat_timeout_ms: 30_000,
    });
    expect(reserved.body.job).toMatchObject({
      heartbeat_timeout_ms: 30_000,
      last_heartbeat_at: null,
      progress: null,
      cancel_requested: false,
    });
    const again = await reserveWith(sid, "h1", { heartbeat_timeout_ms: 30_000 });
    expect([again.status, again.body.callback.token]).toEqual([200, reserved.body.callback.token]);
    // Naming none takes the job as it was reserved.
    expect((await reserveWith(sid, "h1")).status).toBe(200);
    const other = await reserveWith(sid, "h1", { heartbeat_timeout_ms: 60_000 });
    expect([other.status, other.body.code]).toEqual([409, "job_conflict"]);
    expect((await pull(sid, "h1")).heartbeat_timeout_ms).toBe(30_000);
  });

  it("a reservation may turn liveness off with null; null for a job reserved with a timeout is a conflict", async () => {
    const sid = api.uniqueId("hb-null");
    await api.createSession(sid);
    const off = await reserveWith(sid, "h1", { heartbeat_timeout_ms: null });
    expect([off.status, off.body.callback.heartbeat_timeout_ms]).toEqual([201, null]);
    await reserveWith(sid, "h2", { heartbeat_timeout_ms: 10_000 });
    const conflict = await reserveWith(sid, "h2", { heartbeat_timeout_ms: null });
    expect([conflict.status, conflict.body.code]).toEqual([409, "job_conflict"]);
  });

  it("a timeout outside 5,000–86,400,000 ms is a 422 and reserves nothing", async () => {
    const sid = api.uniqueId("hb-range");
    await api.createSession(sid);
    for (const bad of [4_999, 86_400_001, 1.5, "30000"]) {
      const answer = await reserveWith(sid, "h1", { heartbeat_timeout_ms: bad });
      expect([answer.status, answer.body.code]).toEqual([422, "invalid_request"]);
    }
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).status).toBe(404);
  });

  it("without a timeout of its own or the deployment's, a job has none: heartbeats still carry progress", async () => {
    const sid = api.uniqueId("hb-none");
    await api.createSession(sid);
    const reserved = (await reserveWith(sid, "h1")).body;
    expect(reserved.callback.heartbeat_timeout_ms).toBeNull();
    const answer = await beat(sid, "h1", reserved.callback.token, {
      output_tail: "compiling 3/9\n",
      output_bytes_total: 1200,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      status: "running",
      cancel_requested: false,
      heartbeat_timeout_ms: null,
    });
    expect((await pull(sid, "h1")).progress).toMatchObject({
      output_tail: "compiling 3/9\n",
      output_bytes_total: 1200,
    });
  });

  it("a heartbeat's progress shows on the pull and the summary; a bare heartbeat keeps it; the result replaces it", async () => {
    const sid = api.uniqueId("hb-progress");
    await api.createSession(sid);
    const { callback } = (await reserveWith(sid, "h1", { heartbeat_timeout_ms: 60_000 })).body;
    expect((await beat(sid, "h1", callback.token, { output_tail: "step 1\n" })).status).toBe(200);
    expect((await beat(sid, "h1", callback.token)).status).toBe(200);
    const running = await pull(sid, "h1");
    expect(running.progress).toEqual({
      output_tail: "step 1\n",
      output_bytes_total: null,
      at: expect.any(String),
    });
    expect(running.last_heartbeat_at).not.toBeNull();
    const listed = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs[0];
    expect(listed.progress.output_tail).toBe("step 1\n");
    await api.complete(sid, "h1", callback.token, api.result(0, "done"));
    expect((await pull(sid, "h1")).progress).toBeNull();
  });

  it("bad heartbeats are refused and change nothing: a long tail, unknown fields, an agent token, another job's token", async () => {
    const sid = api.uniqueId("hb-bad");
    await api.createSession(sid);
    const one = (await reserveWith(sid, "h1", { heartbeat_timeout_ms: 60_000 })).body.callback;
    const two = (await reserveWith(sid, "h2")).body.callback;
    const long = await beat(sid, "h1", one.token, { output_tail: "x".repeat(16 * 1024 + 1) });
    expect([long.status, long.body.code]).toEqual([422, "invalid_request"]);
    const short = await beat(sid, "h1", one.token, {
      output_tail: "abcdef",
      output_bytes_total: 2,
    });
    expect([short.status, short.body.code]).toEqual([422, "invalid_request"]);
    const extra = await beat(sid, "h1", one.token, { status: "done" });
    expect([extra.status, extra.body.code]).toEqual([422, "invalid_request"]);
    expect((await beat(sid, "h1", api.AGENT_TOKEN)).status).toBe(401);
    const crossed = await beat(sid, "h1", two.token);
    expect([crossed.status, crossed.body.code]).toEqual([401, "unauthorized"]);
    expect(await pull(sid, "h1")).toMatchObject({ last_heartbeat_at: null, progress: null });
  });

  it("a job with a result answers a heartbeat 409 (stop), a deleted session 410 lifetime_ended", async () => {
    const sid = api.uniqueId("hb-stop");
    await api.createSession(sid);
    const { callback } = (await reserveWith(sid, "h1", { heartbeat_timeout_ms: 60_000 })).body;
    await api.complete(sid, "h1", callback.token, api.result(0, "done"));
    const done = await beat(sid, "h1", callback.token);
    expect([done.status, done.body.code]).toEqual([409, "result_conflict"]);
    await api.call("DELETE", `/v1/sessions/${sid}`);
    const gone = await beat(sid, "h1", callback.token);
    expect([gone.status, gone.body.code]).toEqual([410, "lifetime_ended"]);
  });

  it("silence past the timeout makes the job lost (heartbeat_timeout), wakes the agent once, and a later completion gets 409", async () => {
    const sid = api.uniqueId("hb-lost");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    // Reserved again with a timeout would conflict: this job is reserved with one from the start.
    const reserved = await reserveWith(sid, "h2", { heartbeat_timeout_ms: 5_000 });
    expect(reserved.status).toBe(201);
    await api.complete(sid, "h1", tokens.h1!, api.result(0, "first"));
    await api.until(async () => expect((await api.view(sid)).status).toBe("resuming"));
    const runId = await api.registerRun(sid, { resume_id: (await api.view(sid)).resume.id });
    await api.suspend(sid, runId, ["h2"]);

    await silentPastDeadline(sid, "h2");
    await api.fireAlarm(sid);
    const lost = await pull(sid, "h2");
    expect(lost).toMatchObject({ status: "lost", ended_by: "heartbeat_timeout", exit_code: null });
    const woken = await api.view(sid);
    expect(woken.status).toBe("resuming");
    expect(woken.resume.reason).toBe("background_exec_outcome_unknown");
    const late = await api.complete(sid, "h2", reserved.body.callback.token, api.result(0, "late"));
    expect([late.status, late.body.code]).toEqual([409, "result_conflict"]);
    const heartbeat = await beat(sid, "h2", reserved.body.callback.token);
    expect(heartbeat.status).toBe(409);
    const events = (
      await api.call("GET", `/v1/ops/sessions/default/${sid}/events`, { token: OPERATOR_TOKEN })
    ).body.events;
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "completion",
        handle: "h2",
        outcome: "accepted",
        ended_by: "heartbeat_timeout",
      }),
    );
    // Firing again finds nothing: one loss, one wake.
    await api.fireAlarm(sid);
    expect((await api.inboxCounts(sid)).generation).toBe(2);
  });

  it("more overdue jobs than one round takes are all lost in one alarm, waking the session once", async () => {
    const sid = api.uniqueId("hb-many");
    await api.createSession(sid);
    const handles = Array.from({ length: 70 }, (_, i) => `j${i}`);
    for (const handle of handles) {
      expect((await reserveWith(sid, handle, { heartbeat_timeout_ms: 5_000 })).status).toBe(201);
    }
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      const past = Date.now() - 1;
      state.storage.sql.exec("UPDATE jobs SET deadline_at = ?", past);
      state.storage.sql.exec("UPDATE session SET liveness_due_at = ?", past);
    });
    await abortAllDurableObjects();
    await api.fireAlarm(sid);
    const done = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs?status=done&limit=500`)).body
      .jobs;
    expect(done).toHaveLength(70);
    expect(done.every((job: { ended_by: string }) => job.ended_by === "heartbeat_timeout")).toBe(
      true,
    );
    const woken = await api.view(sid);
    expect(woken.inbox.generation).toBe(70);
    expect(woken.resume.reason).toBe("background_exec_outcome_unknown");
    // Another alarm finds nothing: no loss is made twice.
    await api.fireAlarm(sid);
    expect((await api.view(sid)).inbox.generation).toBe(70);
  });

  it("a runner last heard before the service started gets one grace of a whole timeout, then is lost", async () => {
    const sid = api.uniqueId("hb-grace");
    await api.createSession(sid);
    const reserved = (await reserveWith(sid, "h1", { heartbeat_timeout_ms: 5_000 })).body;
    // Heard long before this isolate's first event: its heartbeats may have met a downtime.
    await silentPastDeadline(sid, "h1", 1_000);
    await api.fireAlarm(sid);
    expect((await pull(sid, "h1")).status).toBe("running");
    // The grace is spent: the next silence is a loss, wherever the service started.
    await silentPastDeadline(sid, "h1");
    await api.fireAlarm(sid);
    expect(await pull(sid, "h1")).toMatchObject({ status: "lost", ended_by: "heartbeat_timeout" });
    expect(reserved.callback.heartbeat_timeout_ms).toBe(5_000);
  });

  it("a heartbeat in time keeps the job running through the alarm, and the alarm moves to the new deadline", async () => {
    const sid = api.uniqueId("hb-alive");
    await api.createSession(sid);
    const { callback } = (await reserveWith(sid, "h1", { heartbeat_timeout_ms: 5_000 })).body;
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE session SET liveness_due_at = ?", Date.now() - 1);
    });
    await abortAllDurableObjects();
    expect((await beat(sid, "h1", callback.token)).status).toBe(200);
    await api.fireAlarm(sid);
    expect((await pull(sid, "h1")).status).toBe("running");
    const alarm = await runInDurableObject(api.stubOf(sid), (_, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThan(Date.now() + 3_000);
  });

  it("cancel asks the runner through its next heartbeat, twice is the same, never invents a result; a finished job refuses it", async () => {
    const sid = api.uniqueId("hb-cancel");
    await api.createSession(sid);
    const { callback } = (await reserveWith(sid, "h1", { heartbeat_timeout_ms: 60_000 })).body;
    const cancel = () => api.call("POST", `/v1/sessions/${sid}/exec-jobs/h1/cancel`);
    expect((await cancel()).status).toBe(202);
    expect((await cancel()).body).toEqual({ cancel_requested: true });
    expect(await pull(sid, "h1")).toMatchObject({ status: "running", cancel_requested: true });
    expect((await beat(sid, "h1", callback.token)).body.cancel_requested).toBe(true);
    await api.complete(
      sid,
      "h1",
      callback.token,
      api.result(143, "", { status: "killed", ended_by: "kill_request" }),
    );
    const refused = await cancel();
    expect([refused.status, refused.body.code]).toEqual([409, "invalid_transition"]);
    const unknown = await api.call("POST", `/v1/sessions/${sid}/exec-jobs/nope/cancel`);
    expect(unknown.status).toBe(404);
    const events = (
      await api.call("GET", `/v1/ops/sessions/default/${sid}/events`, { token: OPERATOR_TOKEN })
    ).body.events;
    expect(events.filter((event: { type: string }) => event.type === "cancel")).toHaveLength(1);
  });

  it("an operator's cancel reaches the runner the same way and is recorded as the operator's", async () => {
    const sid = api.uniqueId("hb-ops-cancel");
    await api.createSession(sid);
    const { callback } = (await reserveWith(sid, "h1")).body;
    const answer = await api.call("POST", `/v1/ops/sessions/default/${sid}/exec-jobs/h1/cancel`, {
      token: OPERATOR_TOKEN,
    });
    expect(answer.status).toBe(202);
    expect((await beat(sid, "h1", callback.token)).body.cancel_requested).toBe(true);
    const events = (
      await api.call("GET", `/v1/ops/sessions/default/${sid}/events`, { token: OPERATOR_TOKEN })
    ).body.events;
    expect(events).toContainEqual(
      expect.objectContaining({ type: "operator", action: "cancel", handle: "h1" }),
    );
  });
});
