import { describe, expect, it } from "vitest";
import {
  at,
  CONFIG,
  completed,
  ok,
  pendingItems,
  suspendedOn,
  T0,
} from "../../test/support/domain";
import {
  backoffMs,
  DELIVERY_TIMEOUT_MS,
  IN_FLIGHT_MARGIN_MS,
  nextDueAt,
  oldestRetained,
  recordDelivery,
  recordDeliveryRule,
  tick,
  withDueAttempt,
} from "./delivery";
import { ack, claim, claimableChange } from "./inbox";
import { completeJob, reserveJob } from "./jobs";
import { registerRun } from "./session";
import { sessionStatus } from "./state";

/** The result of job "a" of `state`, whose wait it ends: the decision that wakes the session. */
const completion = (state = suspendedOn(["a"]), lifetime = state.lifetime) =>
  completeJob(
    state,
    {
      lifetime,
      handle: "a",
      tokenSeq: null,
      result: completed(0, "x"),
      observed: false,
      resumeId: "rs-1",
    },
    at(T0),
  );

const woken = () => ok(completion()).state;

type State = ReturnType<typeof woken>;

/** The alarm over the whole-session model: counts come from the rows it holds. */
const timers = (state: State, resumeId: string, now: number, config = {}) =>
  tick(
    state,
    { resumeId, pending: pendingItems(state, now), retainedSince: oldestRetained(state) },
    at(now, config),
  );
const fire = (state: State, now: number, config = {}) =>
  ok(timers(state, "rs-unused", now, config));
const dueAt = (state: State, now: number) => nextDueAt(state, oldestRetained(state), at(now));

describe("resume delivery", () => {
  it("backoff grows exponentially and stays within 1 s and 5 min", () => {
    const delays = [1, 2, 3, 4, 5, 10, 20].map((attempt) => backoffMs(attempt, 1));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 300000, 300000]);
    for (let attempt = 1; attempt < 30; attempt += 1) {
      expect(backoffMs(attempt, 0)).toBeGreaterThanOrEqual(1000);
      expect(backoffMs(attempt, 0.999)).toBeLessThanOrEqual(300000);
    }
  });

  it("an attempt is recorded before the POST, so a crash mid-delivery retries with the same resume_id", () => {
    const first = fire(woken(), T0);
    expect(first.effects).toHaveLength(1);
    expect(first.effects[0]).toMatchObject({
      attempt: 1,
      url: "http://hooks.test/h",
      payload: { resume_id: "rs-1" },
    });
    expect(first.state.resume).toMatchObject({ attempts: 1, state: "scheduled" });
    // No recordDelivery: the process died. Firing again at the same time sends nothing twice.
    expect(fire(first.state, T0).effects).toEqual([]);
    const retry = fire(first.state, dueAt(first.state, T0) ?? 0);
    expect(retry.effects[0]).toMatchObject({ attempt: 2, payload: { resume_id: "rs-1" } });
  });

  it("while an attempt is on the wire the resume is not due again before that POST can have ended", () => {
    const started = fire(woken(), T0);
    expect(dueAt(started.state, T0)).toBe(T0 + DELIVERY_TIMEOUT_MS + IN_FLIGHT_MARGIN_MS);
    // Fired (spuriously) at any moment before then, the timers start nothing.
    for (const now of [T0 + 1, T0 + 1000, T0 + DELIVERY_TIMEOUT_MS + IN_FLIGHT_MARGIN_MS - 1]) {
      expect(fire(started.state, now).effects).toEqual([]);
    }
  });

  it("the backoff counts from the end of a failed attempt, however long the attempt took", () => {
    const started = fire(woken(), T0);
    const end = T0 + 9_500; // the host hung for 9.5 s and then answered 503
    const failed = ok(
      recordDelivery(
        started.state,
        { resumeId: "rs-1", delivered: false, error: "agent host answered 503", random: 0.5 },
        at(end),
      ),
    ).state;
    expect(dueAt(failed, end)).toBe(end + backoffMs(1, 0.5));
    expect(fire(failed, end + backoffMs(1, 0.5) - 1).effects).toEqual([]);
    expect(fire(failed, end + backoffMs(1, 0.5)).effects[0]).toMatchObject({ attempt: 2 });
  });

  it("a failed delivery is retried with the same resume_id until the last attempt, then fails for good", () => {
    let state = woken();
    let now = T0;
    const ids: string[] = [];
    for (let attempt = 1; attempt <= CONFIG.resumeMaxAttempts; attempt += 1) {
      const fired = fire(state, now);
      ids.push(fired.effects[0]?.payload.resume_id ?? "none");
      state = ok(
        recordDelivery(
          fired.state,
          { resumeId: "rs-1", delivered: false, error: "agent host answered 500", random: 0.5 },
          at(now),
        ),
      ).state;
      now = dueAt(state, now) ?? now;
    }
    expect(ids).toEqual(["rs-1", "rs-1", "rs-1"]);
    expect(state.resume).toMatchObject({
      state: "failed",
      attempts: 3,
      lastError: "agent host answered 500",
    });
    expect(sessionStatus(state)).toBe("idle");
    expect(Object.values(state.inbox).map((item) => item.state)).toEqual(["pending"]);
  });

  it("a delivered resume that no run takes is delivered again after the claim timeout, as an attempt", () => {
    const sent = fire(woken(), T0);
    const delivered = ok(
      recordDelivery(
        sent.state,
        { resumeId: "rs-1", delivered: true, error: null, random: 0.5 },
        at(T0 + 10),
      ),
    ).state;
    expect(delivered.resume).toMatchObject({
      state: "delivered",
      nextAttemptAt: T0 + 10 + CONFIG.resumeClaimTimeoutMs,
    });
    expect(fire(delivered, T0 + 20).effects).toEqual([]);
    const again = fire(delivered, T0 + 10 + CONFIG.resumeClaimTimeoutMs);
    expect(again.effects[0]).toMatchObject({ attempt: 2, payload: { resume_id: "rs-1" } });
  });

  it("an outcome recorded after a run took the resume changes nothing", () => {
    const sent = fire(woken(), T0);
    const taken = ok(registerRun(sent.state, { runId: "r", resumeId: "rs-1" }, T0 + 1)).state;
    const late = ok(
      recordDelivery(
        taken,
        { resumeId: "rs-1", delivered: false, error: "500", random: 0.5 },
        at(T0 + 2),
      ),
    );
    expect(late.state).toBe(taken);
  });

  it("without any resume URL the resume waits as no_target until a run registers", () => {
    const state = { ...woken(), resumeUrl: null };
    const fired = fire(state, T0);
    expect(fired.effects).toEqual([]);
    expect(fired.state.resume?.state).toBe("no_target");
    expect(sessionStatus(fired.state)).toBe("resuming");
    expect(fired.state.resume).not.toHaveProperty("nextAttemptAt");
  });

  it("the resume URL is resolved at each attempt, so a configured webhook applies to a pending resume", () => {
    const fired = fire({ ...woken(), resumeUrl: null }, T0, {
      resumeWebhookUrl: "http://hooks.test/global",
    });
    expect(fired.effects[0]).toMatchObject({ url: "http://hooks.test/global" });
  });

  it("an origin removed from the allowlist between two attempts stops deliveries, visibly", () => {
    const first = fire(woken(), T0);
    expect(first.effects).toHaveLength(1);
    const retrying = ok(
      recordDelivery(
        first.state,
        { resumeId: "rs-1", delivered: false, error: "agent host answered 503", random: 0.5 },
        at(T0 + 10),
      ),
    ).state;
    const later = dueAt(retrying, T0 + 10) ?? T0;
    const stopped = fire(retrying, later, { resumeUrlAllowlist: ["http://127.0.0.1:*"] });
    expect(stopped.effects).toEqual([]);
    expect(stopped.state.resume).toMatchObject({ state: "failed", attempts: 1, endedAt: later });
    expect(stopped.state.resume).not.toHaveProperty("nextAttemptAt");
    expect(stopped.state.resume?.lastError).toContain("http://hooks.test");
    expect(stopped.state.resume?.lastError).toContain("RESUME_URL_ALLOWLIST");
    expect(sessionStatus(stopped.state)).toBe("idle");
    // Nothing is due any more: the alarm does not spin on a refused origin.
    expect(nextDueAt(stopped.state, null, at(later))).toBeNull();
  });

  it("the webhook configured by the operator is not held to the allowlist of host-chosen URLs", () => {
    const fired = fire({ ...woken(), resumeUrl: null }, T0, {
      resumeWebhookUrl: "https://agents.example.com/resume",
      resumeUrlAllowlist: [],
    });
    expect(fired.effects[0]).toMatchObject({ url: "https://agents.example.com/resume" });
  });

  it("the resume payload names the session's tenant", () => {
    const fired = fire({ ...woken(), tenant: "acme" }, T0);
    expect(fired.effects[0]?.payload).toMatchObject({ tenant: "acme", session_id: "s1" });
  });
});

describe("a wake through a service binding", () => {
  it("a session with resume_binding is woken by calling the binding, with the webhook's payload, never a URL", () => {
    const state = { ...woken(), resumeUrl: null, resumeBinding: "AGENT" };
    const fired = fire(state, T0, { resumeWebhookUrl: "http://hooks.test/global" });
    const webhook = fire({ ...woken(), resumeUrl: null }, T0, {
      resumeWebhookUrl: "http://hooks.test/global",
    });
    expect(fired.effects).toEqual([
      {
        type: "wake_binding",
        binding: "AGENT",
        attempt: 1,
        payload: webhook.effects[0]?.payload,
      },
    ]);
    expect(fired.state.resume).toEqual(webhook.state.resume);
  });

  it("a failed wake is retried with the same resume_id after the backoff, and fails for good at the last attempt", () => {
    let state = fire({ ...woken(), resumeBinding: "AGENT" }, T0).state;
    for (let attempt = 1; attempt < CONFIG.resumeMaxAttempts; attempt += 1) {
      const now = T0 + attempt * 1_000_000;
      state = ok(
        recordDelivery(
          state,
          { resumeId: "rs-1", delivered: false, error: "wake() threw", random: 0.5 },
          at(now),
        ),
      ).state;
      expect(state.resume).toMatchObject({
        state: "scheduled",
        nextAttemptAt: now + backoffMs(attempt, 0.5),
      });
      const again = fire(state, dueAt(state, now) ?? now);
      expect(again.effects).toMatchObject([{ type: "wake_binding", attempt: attempt + 1 }]);
      expect(again.effects[0]?.payload.resume_id).toBe("rs-1");
      state = again.state;
    }
    const last = ok(
      recordDelivery(
        state,
        { resumeId: "rs-1", delivered: false, error: "wake() threw", random: 0.5 },
        at(T0 + 9_000_000),
      ),
    ).state;
    expect(last.resume).toMatchObject({ state: "failed", lastError: "wake() threw" });
    expect(sessionStatus(last)).toBe("idle");
  });

  it("a binding removed from the allowlist between two attempts stops the wakes, visibly", () => {
    const state = { ...woken(), resumeBinding: "AGENT" };
    const stopped = fire(state, T0, { resumeBindingAllowlist: ["OTHER"] });
    expect(stopped.effects).toEqual([]);
    expect(stopped.state.resume).toMatchObject({ state: "failed", attempts: 0 });
    expect(stopped.state.resume?.lastError).toBe(
      "delivery stopped: resume_binding AGENT is no longer in RESUME_BINDING_ALLOWLIST",
    );
    expect(nextDueAt(stopped.state, null, at(T0))).toBeNull();
  });
});

describe("wait ceiling", () => {
  it("a ceiling that passes admits a wait_expired notice and wakes with that reason", () => {
    const state = suspendedOn(["a", "b"]);
    const expired = ok(timers(state, "rs-ceiling", T0 + CONFIG.waitCeilingMs));
    expect(expired.state.wait).toBeNull();
    const items = Object.values(expired.state.inbox);
    expect(items.map((item) => item.envelope.body)).toEqual([
      {
        type: "runtime_instruction",
        instruction: "background_exec_wait_expired",
        data: { handles: ["a", "b"] },
      },
    ]);
    expect(expired.state.resume).toMatchObject({
      resumeId: "rs-ceiling",
      reason: "background_exec_wait_expired",
    });
  });

  it("when the real result came first the ceiling does nothing", () => {
    const state = woken();
    const later = ok(timers({ ...state, resume: null }, "rs-x", T0 + CONFIG.waitCeilingMs));
    expect(Object.values(later.state.inbox).map((item) => item.envelope.body.instruction)).toEqual([
      "background_exec_completed",
    ]);
  });
});

describe("retention", () => {
  it("a job is purged after JOB_RETENTION_MS and its handle can never be reserved or completed again", () => {
    const state = woken();
    const purged = fire(state, T0 + CONFIG.jobRetentionMs).state;
    expect(purged.jobs.a).toBeUndefined();
    expect(purged.purged.a).toBe(T0 + CONFIG.jobRetentionMs);
    expect(
      reserveJob(purged, { handle: "a", command: "run a", callbackToken: "t" }, T0),
    ).toMatchObject({
      code: "job_expired",
    });
    expect(
      completeJob(
        purged,
        {
          lifetime: purged.lifetime,
          handle: "a",
          tokenSeq: null,
          result: completed(0, "x"),
          observed: false,
          resumeId: "r",
        },
        at(T0),
      ),
    ).toMatchObject({ code: "job_expired" });
  });
});

describe("the first attempt folded into the waking decision", () => {
  it("a completion that wakes carries its first attempt: the same state and POST the timers would make", () => {
    const before = suspendedOn(["a"]);
    const folded = ok(withDueAttempt(before, completion(before), () => 2, at(T0)));
    const byTimers = fire(ok(completion(before)).state, T0);
    expect(folded.state).toEqual(byTimers.state);
    expect(folded.state.resume).toMatchObject({ attempts: 1, lastAttemptAt: T0 });
    expect(folded.effects).toHaveLength(1);
    // The envelope the completion admitted is counted on top of what was pending before it.
    expect(folded.effects[0]).toMatchObject({ attempt: 1, payload: { inbox: { pending: 3 } } });
    expect(folded.value).toEqual(ok(completion(before)).value);
  });

  it("a decision that makes no resume due is left as it is, and nothing is counted", () => {
    const running = ok(registerRun(suspendedOn(["a"]), { runId: "r1", resumeId: null }, T0));
    let counted = 0;
    const decision = completion(running.state);
    expect(withDueAttempt(running.state, decision, () => (counted += 1), at(T0))).toBe(decision);
    expect(counted).toBe(0);
  });

  it("an origin withdrawn from the allowlist fails the resume with the timers' error, and posts nothing", () => {
    const before = suspendedOn(["a"]);
    const config = { resumeUrlAllowlist: ["http://127.0.0.1:*"] };
    const folded = ok(withDueAttempt(before, completion(before), () => 0, at(T0, config)));
    expect(folded.effects).toEqual([]);
    expect(folded.state).toEqual(fire(ok(completion(before)).state, T0, config).state);
    expect(folded.state.resume).toMatchObject({ state: "failed" });
    expect(folded.state.resume?.lastError).toContain("no longer in RESUME_URL_ALLOWLIST");
  });

  it("a resume out of attempts is failed, not posted", () => {
    const before = suspendedOn(["a"]);
    const config = { resumeMaxAttempts: 0 };
    const folded = ok(withDueAttempt(before, completion(before), () => 0, at(T0, config)));
    expect(folded.effects).toEqual([]);
    expect(folded.state.resume).toMatchObject({ state: "failed", attempts: 0 });
  });

  it("a resume that was already due is left to the timers, with nothing counted", () => {
    // Delivered at T0 and taken by no run: due again after the claim timeout. An ack landing then
    // must not carry that redelivery (the timers count the inbox after the ack, and run first).
    const delivered = ok(
      recordDelivery(
        fire(woken(), T0).state,
        { resumeId: "rs-1", delivered: true, error: null, random: 0 },
        at(T0),
      ),
    ).state;
    const later = T0 + CONFIG.resumeClaimTimeoutMs + 1;
    const claimed = ok(claim(delivered, { max: 16, leaseMs: 3_600_000 }, T0 + 1)).state;
    const acked = ack(claimed, Object.keys(claimed.inbox), later);
    let counted = 0;
    expect(withDueAttempt(claimed, acked, () => (counted += 1), at(later))).toBe(acked);
    expect(counted).toBe(0);
    expect(fire(ok(acked).state, later).effects[0]).toMatchObject({
      attempt: 2,
      payload: { inbox: { pending: 0 } },
    });
  });

  it("a refusal passes through unchanged", () => {
    const refused = completion(suspendedOn(["a"]), "an-ended-lifetime");
    expect(refused.ok).toBe(false);
    expect(withDueAttempt(null, refused, () => 0, at(T0))).toBe(refused);
  });

  it("no attempt starts while another POST of the session is on the wire: the resume stays due", () => {
    const before = suspendedOn(["a"]);
    const held = ok(
      withDueAttempt(before, completion(before), () => 0, { ...at(T0), postOnWire: true }),
    );
    expect(held.effects).toEqual([]);
    expect(held.state.resume).toMatchObject({ state: "scheduled", attempts: 0, nextAttemptAt: T0 });
    const ticked = ok(
      tick(
        held.state,
        { resumeId: "rs-x", pending: 1, retainedSince: null },
        { ...at(T0), postOnWire: true },
      ),
    );
    expect(ticked.effects).toEqual([]);
  });

  it("a resume with no target is marked so in the same decision, with no POST", () => {
    const before = { ...suspendedOn(["a"]), resumeUrl: null };
    const folded = ok(
      withDueAttempt(before, completion(before), () => 0, at(T0, { resumeWebhookUrl: null })),
    );
    expect(folded.effects).toEqual([]);
    expect(folded.state.resume?.state).toBe("no_target");
  });
});

describe("the change of claimable items a decision makes", () => {
  it("an admitted item adds one; a claim takes it away; an ack of a claimed item changes nothing", () => {
    const before = suspendedOn(["a"]);
    const admitted = ok(completion(before));
    expect(claimableChange(before, admitted.writes, T0)).toBe(1);
    const state = admitted.state;
    const claimed = ok(claim(state, { max: 16, leaseMs: 60_000 }, T0));
    expect(claimableChange(state, claimed.writes, T0)).toBe(-1);
    const acked = ok(ack(claimed.state, Object.keys(claimed.state.inbox), T0 + 1));
    expect(claimableChange(claimed.state, acked.writes, T0 + 1)).toBe(0);
  });

  it("an ack of an item whose lease ran out takes one away: it counted as claimable", () => {
    const state = woken();
    const claimed = ok(claim(state, { max: 16, leaseMs: 60_000 }, T0)).state;
    const lapsed = T0 + 60_000;
    const acked = ok(ack(claimed, Object.keys(claimed.inbox), lapsed)).writes;
    expect(claimableChange(claimed, acked, lapsed)).toBe(-1);
    expect(claimableChange(null, acked, lapsed)).toBe(0);
  });
});

describe("an attempt's outcome in the audit trail", () => {
  const outcomeOf = (state: State, lifetime: string) => {
    const cmd = {
      resumeId: "rs-1",
      lifetime,
      delivered: true,
      error: null,
      random: 0.5,
      event: {
        type: "delivery" as const,
        resume_id: "rs-1",
        attempt: 1,
        status: 200,
        error: null,
        duration_ms: 5,
      },
    };
    const loaded = { session: state, pending: () => 0, retainedSince: null, overdue: null };
    const decision = ok(recordDeliveryRule.decide(loaded, cmd, at(T0 + 10)));
    return {
      state: decision.state,
      events: recordDeliveryRule.events?.(cmd, null, decision.state, state) ?? [],
    };
  };

  it("a delivery of this lifetime is recorded, and its event is in the trail", () => {
    const sent = fire(woken(), T0).state;
    const outcome = outcomeOf(sent, sent.lifetime);
    expect(outcome.state.resume).toMatchObject({ state: "delivered" });
    expect(outcome.events).toHaveLength(1);
  });

  it("a delivery taken by a run meanwhile still has its event in the trail of its lifetime", () => {
    const sent = fire(woken(), T0).state;
    const taken = ok(registerRun(sent, { runId: "run-1", resumeId: "rs-1" }, T0 + 5)).state;
    expect(outcomeOf(taken, taken.lifetime).events).toHaveLength(1);
  });

  it("a delivery that outlived its lifetime changes nothing and is not in the next lifetime's trail", () => {
    const sent = fire(woken(), T0).state;
    // The session was deleted and created again while the attempt was on the wire.
    const next = { ...sent, lifetime: "lt-next" };
    const outcome = outcomeOf(next, sent.lifetime);
    expect(outcome.state).toEqual(next);
    expect(outcome.events).toEqual([]);
  });
});
