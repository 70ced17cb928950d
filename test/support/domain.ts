// Builders for domain tests: a session and results from defaults, a fixed clock and config.
import type { Ctx, Decision, Effect, Write } from "../../src/domain/decision";
import type { InboxCounts } from "../../src/domain/inbox";
import { reserveJob } from "../../src/domain/jobs";
import { createSession, registerRun, suspendRun } from "../../src/domain/session";
import type { JobResult, Session } from "../../src/domain/state";

export const T0 = 1_700_000_000_000;

export const CONFIG: Ctx["config"] = {
  waitCeilingMs: 60_000,
  jobRetentionMs: 86_400_000,
  resumeMaxAttempts: 3,
  resumeClaimTimeoutMs: 600_000,
  resumeWebhookUrl: null,
  resumeUrlAllowlist: ["http://hooks.test", "http://127.0.0.1:*"],
  resumeBindingAllowlist: ["AGENT"],
};

export const at = (now: number, config: Partial<Ctx["config"]> = {}): Ctx => ({
  now,
  config: { ...CONFIG, ...config },
});

/** Unwraps a decision a test expects to succeed. */
export function ok<T>(decision: Decision<T>): {
  state: Session;
  value: T;
  effects: readonly Effect[];
  writes: readonly Write[];
} {
  if (!decision.ok) throw new Error(`expected success, got ${decision.code}: ${decision.detail}`);
  if (decision.state === null) throw new Error("expected a session");
  const { state, value, effects, writes } = decision;
  return { state, value, effects, writes };
}

/** A job's liveness fields when it has no heartbeat timeout and was never heard from. */
export const NO_LIVENESS = {
  heartbeatTimeoutMs: null,
  lastHeartbeatAt: null,
  deadlineAt: null,
  graceFor: null,
  progress: null,
  cancelRequested: false,
} as const;

export const completed = (
  exitCode: number,
  output: string,
  extra: Partial<JobResult> = {},
): JobResult => ({
  status: "completed",
  exitCode,
  output,
  outputTruncated: false,
  outputBytesTotal: new TextEncoder().encode(output).byteLength,
  endedBy: "process",
  ...extra,
});

export function session(overrides: Partial<Session> = {}): Session {
  const created = ok(
    createSession(
      null,
      {
        tenant: "default",
        id: "s1",
        lifetime: "lt-1",
        resumeUrl: "http://hooks.test/h",
        resumeBinding: null,
        metadata: {},
      },
      T0,
    ),
  ).state;
  return { ...created, ...overrides };
}

export function withJobs(base: Session, handles: string[], now = T0): Session {
  let state = base;
  for (const handle of handles) {
    state = ok(
      reserveJob(state, { handle, command: `run ${handle}`, callbackToken: `tok-${handle}` }, now),
    ).state;
  }
  return state;
}

/** A session with the jobs reserved and a run suspended on them. */
export function suspendedOn(handles: string[], wake: "all" | "any" = "all", now = T0): Session {
  const running = ok(
    registerRun(withJobs(session(), handles, now), { runId: "run-1", resumeId: null }, now),
  ).state;
  return ok(
    suspendRun(
      running,
      { runId: "run-1", handles, wake, ceilingMs: null, resumeId: "rs-suspend" },
      at(now),
    ),
  ).state;
}

/**
 * The inbox as the model counts it: a claimed item whose lease ran out is pending again. The
 * shell counts in SQL (store.countPending); only the domain tests and the model need this here.
 */
export function inboxCounts(session: Session, now: number): InboxCounts {
  let pending = 0;
  let claimed = 0;
  let acked = 0;
  for (const item of Object.values(session.inbox)) {
    if (item.state === "acked") acked += 1;
    else if (
      item.state === "pending" ||
      (item.leaseExpiresAt !== null && item.leaseExpiresAt <= now)
    )
      pending += 1;
    else claimed += 1;
  }
  return { pending, claimed, acked, generation: session.generation };
}

export const pendingItems = (session: Session, now: number): number =>
  inboxCounts(session, now).pending;
