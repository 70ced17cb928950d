// Exec job rules: one reservation per handle, first terminal result wins, lifetime and expiry checks.
// Minting and verifying callback tokens is left to the shell (it holds the secrets).

import type { AuditEvent } from "./audit";
import type { Ctx, Decision, Needs, Rule } from "./decision";
import { decided } from "./decision";
import { fail, type Result } from "./errors";
import { hasBacklogRoom } from "./inbox";
import { deadlineFrom, earliest } from "./liveness-time";
import { completionEnvelope } from "./messages";
import { type Quotas, runningJobsRefusal } from "./quotas";
import { own } from "./records";
import type { FullOutput, Job, JobResult, Session } from "./state";
import { sessionStatus } from "./state";
import { type Disposition, wakeForResult } from "./wake";

const purgedFailure = (handle: string) =>
  fail("job_expired", `job ${handle} was purged after its retention period`);

/** The `write_stdin` pull: a purged handle is expired (410), one never reserved is not found. */
export function pullJob(session: Session, handle: string): Result<Job> {
  if (own(session.purged, handle) !== undefined) return purgedFailure(handle);
  const job = own(session.jobs, handle);
  return job === undefined ? fail("not_found", `no job ${handle}`) : { ok: true, value: job };
}

/**
 * `heartbeatTimeoutMs` is the reservation's own timeout, or the tenant's default when it named
 * none (`timeoutNamed` false): only a timeout the caller named can conflict with the job's.
 */
export function reserveJob(
  session: Session,
  cmd: {
    handle: string;
    command: string;
    callbackToken: string;
    heartbeatTimeoutMs?: number | null;
    timeoutNamed?: boolean;
    /** The running-jobs quota: only a new reservation counts the running jobs against it. */
    quota?: { readonly running: () => number; readonly quotas: Quotas };
  },
  now: number,
): Decision<{ job: Job; created: boolean }> {
  if (own(session.purged, cmd.handle) !== undefined) return purgedFailure(cmd.handle);
  const existing = own(session.jobs, cmd.handle);
  const timeout = cmd.heartbeatTimeoutMs ?? null;
  if (existing !== undefined) {
    if (existing.command !== cmd.command) {
      return fail("job_conflict", `handle ${cmd.handle} is already reserved for another command`);
    }
    if (cmd.timeoutNamed === true && existing.heartbeatTimeoutMs !== timeout) {
      return fail(
        "job_conflict",
        `handle ${cmd.handle} is already reserved with heartbeat_timeout_ms ${String(existing.heartbeatTimeoutMs)}`,
      );
    }
    if (existing.callbackToken === cmd.callbackToken)
      return decided(session, { job: existing, created: false });
    // The secret that signed the old token was retired: hand out one that still verifies.
    const job = { ...existing, callbackToken: cmd.callbackToken };
    return decided(
      { ...session, jobs: { ...session.jobs, [job.handle]: job } },
      { job, created: false },
      [],
      [{ type: "replace_job_token", handle: job.handle, callbackToken: job.callbackToken }],
    );
  }
  const full =
    cmd.quota === undefined ? null : runningJobsRefusal(cmd.quota.running(), cmd.quota.quotas);
  if (full !== null) return full;
  const job: Job = {
    handle: cmd.handle,
    seq: session.jobSeq + 1,
    command: cmd.command,
    lifetime: session.lifetime,
    reservedAt: now,
    callbackToken: cmd.callbackToken,
    heartbeatTimeoutMs: timeout,
    lastHeartbeatAt: null,
    deadlineAt: deadlineFrom(timeout, now),
    graceFor: null,
    progress: null,
    cancelRequested: false,
    result: null,
  };
  return decided(
    {
      ...session,
      jobSeq: job.seq,
      jobs: { ...session.jobs, [job.handle]: job },
      livenessDueAt: earliest(session.livenessDueAt, job.deadlineAt),
    },
    { job, created: true },
    [],
    [{ type: "insert_job", job }],
  );
}

/** The rows a reservation, a pull or a token's job reads: the job (with output) and its tombstone. */
export const jobAndTombstone = (handle: string, tombstone = true, output = true): Needs => ({
  jobs: { handles: [handle], output },
  ...(tombstone ? { tombstones: [handle] } : {}),
});

/** `mint` makes the callback token for the reservation's `seq`, keeping `existing` while it verifies. */
type ReserveCmd = {
  handle: string;
  command: string;
  heartbeatTimeoutMs: number | null;
  timeoutNamed: boolean;
  mint: (existing: string | undefined, seq: number) => string;
  /** Counts the session's running jobs (a read the shell makes only when a new job needs it). */
  running?: () => number;
};

export const reserveRule: Rule<ReserveCmd, { job: Job; created: boolean }> = {
  needs: (_, cmd) => jobAndTombstone(cmd.handle),
  decide: ({ session }, cmd, ctx) =>
    reserveJob(
      session,
      {
        handle: cmd.handle,
        command: cmd.command,
        heartbeatTimeoutMs: cmd.heartbeatTimeoutMs,
        timeoutNamed: cmd.timeoutNamed,
        callbackToken: cmd.mint(
          own(session.jobs, cmd.handle)?.callbackToken,
          reservationSeq(session, cmd.handle),
        ),
        ...(cmd.running === undefined || ctx.config.quotas === undefined
          ? {}
          : { quota: { running: cmd.running, quotas: ctx.config.quotas } }),
      },
      ctx.now,
    ),
};

/** The `write_stdin` pull reads its job and tombstone; it is a read, not a decision. */
export const pullNeeds = (handle: string): Needs => jobAndTombstone(handle);

/** The `seq` a reservation of `handle` gets: its job's own, or the next one (the token binds it). */
export const reservationSeq = (session: Session, handle: string): number =>
  own(session.jobs, handle)?.seq ?? session.jobSeq + 1;

export type CompletionReply =
  | { outcome: "accepted"; generation: number; disposition: Disposition }
  | { outcome: "duplicate"; generation: number };

/** Two completions name the same full output (or both none). */
const sameFullOutput = (a?: FullOutput, b?: FullOutput): boolean =>
  a === undefined || b === undefined
    ? a === b
    : a.bytes === b.bytes &&
      a.sha256 === b.sha256 &&
      a.parts.length === b.parts.length &&
      a.parts.every(
        (part, i) => part.sha256 === b.parts[i]?.sha256 && part.bytes === b.parts[i]?.bytes,
      );

const sameResult = (a: JobResult, b: JobResult): boolean =>
  a.status === b.status &&
  a.exitCode === b.exitCode &&
  a.output === b.output &&
  a.outputTruncated === b.outputTruncated &&
  a.outputBytesTotal === b.outputBytesTotal &&
  (a.outputBytesTotalKnown ?? true) === (b.outputBytesTotalKnown ?? true) &&
  a.endedBy === b.endedBy &&
  sameFullOutput(a.fullOutput, b.fullOutput);

/**
 * The job a callback token names. A token carries its reservation's `seq`: a job that is gone, or
 * a handle reserved again after a purge, was purged since (410) however long ago — no tombstone
 * needed. Tokens minted before `seq` existed (`tokenSeq` null) fall back to the tombstones.
 */
export function jobOfToken(session: Session, handle: string, tokenSeq: number | null): Result<Job> {
  const job = own(session.jobs, handle);
  if (tokenSeq !== null) {
    if (job !== undefined && job.seq === tokenSeq) return { ok: true, value: job };
    if (tokenSeq <= session.jobSeq) return purgedFailure(handle);
    return fail("not_found", `no job ${handle} in this session lifetime`);
  }
  if (own(session.purged, handle) !== undefined) return purgedFailure(handle);
  return job === undefined
    ? fail("not_found", `no job ${handle} in this session lifetime`)
    : { ok: true, value: job };
}

/** The job a runner's callback token names: 410 once its lifetime ended, then as `jobOfToken`. */
export function callbackJob(
  session: Session | null,
  cmd: { lifetime: string; handle: string; tokenSeq: number | null },
): Result<{ session: Session; job: Job }> {
  if (session === null || session.lifetime !== cmd.lifetime) {
    return fail("lifetime_ended", "the session lifetime this job belongs to has ended");
  }
  const job = jobOfToken(session, cmd.handle, cmd.tokenSeq);
  return job.ok ? { ok: true, value: { session, job: job.value } } : job;
}

export function completeJob(
  before: Session | null,
  cmd: {
    lifetime: string;
    handle: string;
    tokenSeq: number | null;
    result: JobResult;
    observed: boolean;
    resumeId: string;
  },
  ctx: Ctx,
): Decision<CompletionReply> {
  const found = callbackJob(before, cmd);
  if (!found.ok) return found;
  const { session, job } = found.value;
  if (job.result !== null) {
    if (!sameResult(job.result, cmd.result)) {
      return fail("result_conflict", `job ${cmd.handle} already has a different result`);
    }
    return decided(session, {
      outcome: "duplicate",
      generation: job.generation ?? session.generation,
    });
  }

  const status = sessionStatus(session);
  const observedOnly = cmd.observed && (status === "running" || status === "idle");
  if (!observedOnly && !hasBacklogRoom(session)) {
    return fail("inbox_full", "the session inbox holds 1024 unacknowledged items");
  }
  const generation = observedOnly ? null : session.generation + 1;
  // The result replaces the liveness: no deadline, no progress.
  const done = {
    ...job,
    deadlineAt: null,
    progress: null,
    result: cmd.result,
    completedAt: ctx.now,
    generation,
  };
  const envelope =
    generation === null ? null : completionEnvelope(done, cmd.result, generation, ctx.now);
  const woken = wakeForResult(session, done, envelope, cmd.resumeId, ctx.now);
  return decided(
    woken.session,
    {
      outcome: "accepted",
      generation: generation ?? session.generation,
      disposition: woken.disposition,
    },
    [],
    woken.writes,
  );
}

export type CompleteCmd = Parameters<typeof completeJob>[1];

const completionEvent = (
  cmd: CompleteCmd,
  before: { lifetime: string },
  outcome: string,
  disposition: string | null,
): AuditEvent => ({
  type: "completion",
  handle: cmd.handle,
  outcome,
  disposition,
  ...(before.lifetime !== cmd.lifetime ? { token_lifetime: cmd.lifetime } : {}),
});

export const completionRule: Rule<CompleteCmd, CompletionReply> = {
  // Another lifetime's token loads nothing: the rule refuses it on the core alone. A token with a
  // `seq` needs no tombstone (see jobOfToken).
  needs: (core, cmd) =>
    core.lifetime !== cmd.lifetime ? {} : jobAndTombstone(cmd.handle, cmd.tokenSeq === null),
  absent: (cmd, ctx) => completeJob(null, cmd, ctx),
  decide: ({ session }, cmd, ctx) => completeJob(session, cmd, ctx),
  events: (cmd, reply, _, before) => [
    completionEvent(
      cmd,
      before,
      reply.outcome,
      reply.outcome === "accepted" ? reply.disposition : null,
    ),
  ],
  // A refusal changes nothing but the trail.
  refused: (cmd, code, before) => completionEvent(cmd, before, code, null),
};
