import { describe, expect, it } from "vitest";
import {
  at,
  completed,
  ok,
  pendingItems,
  session,
  suspendedOn,
  T0,
  withJobs,
} from "../../test/support/domain";
import { claim } from "./inbox";
import { completeJob } from "./jobs";
import { finishRun, registerRun, suspendRun } from "./session";
import { sessionStatus } from "./state";

const done = (state: ReturnType<typeof session>, handle: string, output = "out", extra = {}) =>
  completeJob(
    state,
    {
      lifetime: state.lifetime,
      handle,
      tokenSeq: null,
      result: completed(0, output),
      observed: false,
      resumeId: `rs-${handle}`,
      ...extra,
    },
    at(T0 + 1000),
  );

const finish = (state: ReturnType<typeof session>, runId: string, now: number) =>
  finishRun(state, { runId, resumeId: "rs-fin", pending: pendingItems(state, now) }, now);

describe("wake rules", () => {
  it("a completion that meets an `all` wait only when the last handle finishes stages the others", () => {
    const first = ok(done(suspendedOn(["a", "b"]), "a"));
    expect(first.value).toEqual({ outcome: "accepted", generation: 1, disposition: "staged" });
    expect(sessionStatus(first.state)).toBe("suspended");
    expect(first.state.wait?.handles).toEqual(["b"]);
    expect(first.state.resume).toBeNull();

    const second = ok(done(first.state, "b"));
    expect(second.value).toEqual({
      outcome: "accepted",
      generation: 2,
      disposition: "resume_scheduled",
    });
    expect(second.state.wait).toBeNull();
    expect(second.state.resume).toMatchObject({
      resumeId: "rs-b",
      reason: "background_exec_completed",
    });
  });

  it("an `any` wait wakes on the first completion and later ones coalesce into that resume", () => {
    const first = ok(done(suspendedOn(["a", "b"], "any"), "a"));
    expect(first.value).toMatchObject({ disposition: "resume_scheduled" });
    const second = ok(done(first.state, "b"));
    expect(second.value).toMatchObject({ disposition: "queued", generation: 2 });
    expect(second.state.resume?.resumeId).toBe("rs-a");
  });

  it("a completion during an active run notifies the run and launches nothing", () => {
    const running = ok(
      registerRun(suspendedOn(["a"]), { runId: "human", resumeId: null }, T0),
    ).state;
    const next = ok(done(running, "a"));
    expect(next.value).toMatchObject({ disposition: "active_run_notified" });
    expect(next.state.notifySeq).toBe(running.notifySeq + 1);
    expect(next.state.wait).toBeNull();
    expect(next.state.resume).toBeNull();
    expect(sessionStatus(next.state)).toBe("running");
  });

  it("an observed result during a run is stored and pullable but admits nothing", () => {
    const running = ok(
      registerRun(withJobs(session(), ["a"]), { runId: "r", resumeId: null }, T0),
    ).state;
    const next = ok(done(running, "a", "seen", { observed: true }));
    expect(next.value).toEqual({ outcome: "accepted", generation: 0, disposition: "observed" });
    expect(next.state.inbox).toEqual({});
    expect(next.state.jobs.a?.result?.output).toBe("seen");
    expect(next.state.notifySeq).toBe(running.notifySeq);
  });

  it("an observed result while suspended is admitted like any other, so the agent is not stranded", () => {
    const next = ok(done(suspendedOn(["a"]), "a", "seen", { observed: true }));
    expect(next.value).toMatchObject({ disposition: "resume_scheduled" });
    expect(Object.keys(next.state.inbox)).toHaveLength(1);
  });

  it("an idle session is woken by a completion", () => {
    const next = ok(done(withJobs(session(), ["a"]), "a"));
    expect(next.value).toMatchObject({ disposition: "resume_scheduled" });
    expect(sessionStatus(next.state)).toBe("resuming");
  });

  it("a lost process wakes with the outcome-unknown reason", () => {
    const lost = completed(0, "", { status: "lost", exitCode: null, endedBy: "runner_shutdown" });
    const state = suspendedOn(["a"]);
    const next = ok(
      completeJob(
        state,
        {
          lifetime: state.lifetime,
          handle: "a",
          tokenSeq: null,
          result: lost,
          observed: false,
          resumeId: "r",
        },
        at(T0),
      ),
    );
    expect(next.state.resume?.reason).toBe("background_exec_outcome_unknown");
    expect(Object.values(next.state.inbox)[0]?.envelope.body.instruction).toBe(
      "background_exec_outcome_unknown",
    );
  });

  it("results that arrive before the suspend wake at once when the run suspends", () => {
    const running = ok(
      registerRun(withJobs(session(), ["a"]), { runId: "r", resumeId: null }, T0),
    ).state;
    const early = ok(done(running, "a")).state;
    const suspended = ok(
      suspendRun(
        early,
        { runId: "r", handles: ["a"], wake: "all", ceilingMs: null, resumeId: "rs-now" },
        at(T0 + 2000),
      ),
    ).state;
    expect(suspended.wait).toBeNull();
    expect(suspended.resume).toMatchObject({
      resumeId: "rs-now",
      reason: "background_exec_completed",
      state: "scheduled",
    });
    expect(sessionStatus(suspended)).toBe("resuming");
  });

  it("a run that finishes with unclaimed items gives one inbox_pending resume", () => {
    const running = ok(
      registerRun(withJobs(session(), ["a"]), { runId: "r", resumeId: null }, T0),
    ).state;
    const withItem = ok(done(running, "a")).state;
    const finished = ok(finish(withItem, "r", T0 + 5)).state;
    expect(finished.resume).toMatchObject({ resumeId: "rs-fin", reason: "inbox_pending" });
  });

  it("a run that finishes with everything claimed goes idle without a resume", () => {
    const running = ok(
      registerRun(withJobs(session(), ["a"]), { runId: "r", resumeId: null }, T0),
    ).state;
    const claimed = ok(
      claim(ok(done(running, "a")).state, { max: 16, leaseMs: 60_000 }, T0 + 2),
    ).state;
    const finished = ok(finish(claimed, "r", T0 + 5)).state;
    expect(finished.resume).toBeNull();
    expect(sessionStatus(finished)).toBe("idle");
  });

  it("a run that finishes over an armed wait goes back to suspended and keeps items for that wake", () => {
    const human = ok(
      registerRun(suspendedOn(["a", "b"]), { runId: "human", resumeId: null }, T0),
    ).state;
    const withItem = ok(done(human, "a")).state;
    const finished = ok(finish(withItem, "human", T0 + 5)).state;
    expect(sessionStatus(finished)).toBe("suspended");
    expect(finished.resume).toBeNull();
    expect(finished.wait?.handles).toEqual(["b"]);
  });

  it("registering a run takes the pending resume so it is never delivered again", () => {
    const woken = ok(done(suspendedOn(["a"]), "a")).state;
    const run = ok(registerRun(woken, { runId: "r2", resumeId: "rs-a" }, T0 + 10)).state;
    expect(run.resume).toMatchObject({ state: "completed", endedAt: T0 + 10 });
    expect(run.resume).not.toHaveProperty("nextAttemptAt");
  });

  it("a run that names a resume the session does not hold is refused and takes nothing", () => {
    const woken = ok(done(suspendedOn(["a"]), "a")).state;
    const refused = registerRun(woken, { runId: "r2", resumeId: "<resume_id>" }, T0 + 10);
    expect(refused).toMatchObject({ ok: false, code: "invalid_transition" });
    expect(!refused.ok && refused.detail).toContain(`its resume is ${woken.resume?.resumeId}`);
    const idle = session();
    expect(registerRun(idle, { runId: "r", resumeId: "rs-none" }, T0)).toMatchObject({
      ok: false,
      detail: "resume rs-none is not this session's resume: it has none",
    });
  });

  it("a second run while one is active is a run_conflict and the same run again is idempotent", () => {
    const running = ok(registerRun(session(), { runId: "r", resumeId: null }, T0)).state;
    expect(registerRun(running, { runId: "other", resumeId: null }, T0)).toMatchObject({
      ok: false,
      code: "run_conflict",
    });
    expect(ok(registerRun(running, { runId: "r", resumeId: null }, T0)).state).toBe(running);
  });

  it("suspending on a handle that is not a job of this lifetime is not_found", () => {
    const running = ok(registerRun(session(), { runId: "r", resumeId: null }, T0)).state;
    const refused = suspendRun(
      running,
      { runId: "r", handles: ["ghost"], wake: "all", ceilingMs: null, resumeId: "x" },
      at(T0),
    );
    expect(refused).toMatchObject({ ok: false, code: "not_found" });
  });
});
