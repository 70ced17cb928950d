// Liveness (contract §9): heartbeats that keep a job alive and carry its progress, the silence
// that makes it lost, and cancel requests the next heartbeat carries to the runner.
// Loading the overdue jobs and keeping the alarm on the earliest deadline is left to the shell.

import type { AuditEvent } from "./audit";
import type { Ctx, Decision, Needs, Overdue, Rule, Write } from "./decision";
import { decided } from "./decision";
import { fail } from "./errors";
import { callbackJob, completeJob, jobAndTombstone, jobOfToken } from "./jobs";
import { deadlineFrom } from "./liveness-time";
import { own } from "./records";
import type { Job, JobResult, Progress, Session } from "./state";

/** A silent job's loss that a full inbox refused is tried again this much later. */
export const FULL_INBOX_RETRY_MS = 60_000;
/** Overdue jobs one timer round takes; more are taken by the next rounds at once. */
export const OVERDUE_PER_ROUND = 64;

/** The result a silent job gets, exactly as if its runner had posted `lost`. */
export const HEARTBEAT_LOST: JobResult = {
  status: "lost",
  exitCode: null,
  output: "",
  outputTruncated: false,
  outputBytesTotal: 0,
  endedBy: "heartbeat_timeout",
};

type RunningJob = Extract<Job, { result: null }>;

/** A deadline checked this long after it passed shows the service could not run it: downtime. */
export const LATE_CHECK_MS = 1_000;

/**
 * What a passed deadline means. The runner was last heard at `heard`. If the service has started
 * since (`serviceUpSince`: this isolate's first event), its heartbeats may have met the downtime:
 * the job gets a grace of a whole timeout from now. The first grace of a silence needs only that
 * start; another one needs a newer start *and* a check that ran late (an alarm that could not fire
 * on time because the service was down again). An object closed when idle keeps its isolate, so
 * its alarm finds no new start and no grace. An isolate the platform starts only for an alarm
 * that fires on time earns one grace, never two: a vanished runner is declared lost at most one
 * timeout late beyond the downtime, never postponed for ever.
 */
export function silenceVerdict(
  job: RunningJob,
  now: number,
  serviceUpSince: number,
): "alive" | "grace" | "lost" {
  if (job.deadlineAt === null || job.deadlineAt > now) return "alive";
  const heard = job.lastHeartbeatAt ?? job.reservedAt;
  if (serviceUpSince <= heard) return "lost";
  if (job.graceFor === null) return "grace";
  const downAgain = serviceUpSince > job.graceFor && now - job.deadlineAt >= LATE_CHECK_MS;
  return downAgain ? "grace" : "lost";
}

const withJob = (session: Session, job: Job): Session => ({
  ...session,
  jobs: { ...session.jobs, [job.handle]: job },
});

export interface SilentLoss {
  readonly handle: string;
  readonly disposition: string;
}

/**
 * The liveness timer: every overdue job is given its grace or the result `lost`, in the tick's
 * one serialized step, and `livenessDueAt` becomes the earliest deadline left.
 */
export function expireSilent(
  session: Session,
  overdue: Overdue,
  resumeId: string,
  ctx: Ctx,
): { session: Session; writes: Write[]; lost: SilentLoss[] } {
  let next = session;
  const writes: Write[] = [];
  const lost: SilentLoss[] = [];
  const later: number[] = overdue.nextDeadline === null ? [] : [overdue.nextDeadline];
  const upSince = ctx.serviceUpSince ?? 0;
  const postpone = (job: RunningJob, deadlineAt: number, graceFor: number | null) => {
    const moved: RunningJob = { ...job, deadlineAt, graceFor };
    next = withJob(next, moved);
    writes.push({ type: "update_liveness", job: moved });
    later.push(deadlineAt);
  };
  for (const handle of overdue.handles) {
    const job = own(next.jobs, handle);
    if (job === undefined || job.result !== null || job.heartbeatTimeoutMs === null) continue;
    const verdict = silenceVerdict(job, ctx.now, upSince);
    if (verdict === "alive") {
      if (job.deadlineAt !== null) later.push(job.deadlineAt);
      continue;
    }
    if (verdict === "grace") {
      postpone(job, ctx.now + job.heartbeatTimeoutMs, upSince);
      continue;
    }
    const done = completeJob(
      next,
      {
        lifetime: next.lifetime,
        handle,
        tokenSeq: job.seq,
        result: HEARTBEAT_LOST,
        observed: false,
        resumeId,
      },
      ctx,
    );
    if (!done.ok || done.state === null || done.value.outcome !== "accepted") {
      // Only a full inbox refuses it: the loss waits for room, as a runner's 429 would.
      postpone(job, ctx.now + FULL_INBOX_RETRY_MS, job.graceFor);
      continue;
    }
    next = done.state;
    writes.push(...done.writes);
    lost.push({ handle, disposition: done.value.disposition });
  }
  const livenessDueAt = overdue.more ? ctx.now : later.length === 0 ? null : Math.min(...later);
  return { session: { ...next, livenessDueAt }, writes, lost };
}

/** The timer's needs: overdue jobs only when the earliest deadline may have passed. */
export const overdueNeeds = (session: Pick<Session, "livenessDueAt">, now: number): Needs =>
  session.livenessDueAt !== null && session.livenessDueAt <= now
    ? { overdue: { max: OVERDUE_PER_ROUND } }
    : {};

export interface HeartbeatReply {
  readonly status: "running";
  readonly cancel_requested: boolean;
  readonly heartbeat_timeout_ms: number | null;
}

export interface HeartbeatCmd {
  readonly lifetime: string;
  readonly handle: string;
  readonly tokenSeq: number | null;
  readonly outputTail?: string;
  readonly outputBytesTotal?: number;
}

/**
 * A heartbeat: the job's deadline counts again from now, and progress it carries replaces the
 * last (a bare heartbeat keeps it). One row written; the core is not (`livenessDueAt` stays a
 * lower bound). A job with a result tells the runner to stop (409), as a completion would.
 */
export function heartbeat(
  before: Session | null,
  cmd: HeartbeatCmd,
  now: number,
): Decision<HeartbeatReply> {
  const found = callbackJob(before, cmd);
  if (!found.ok) return found;
  const { session, job } = found.value;
  if (job.result !== null) {
    return fail("result_conflict", `job ${cmd.handle} already has a result: stop heartbeating`);
  }
  const carries = cmd.outputTail !== undefined || cmd.outputBytesTotal !== undefined;
  const progress: Progress | null = carries
    ? {
        outputTail: cmd.outputTail ?? job.progress?.outputTail ?? "",
        outputBytesTotal: cmd.outputBytesTotal ?? job.progress?.outputBytesTotal ?? null,
        at: now,
      }
    : job.progress;
  const beat: RunningJob = {
    ...job,
    lastHeartbeatAt: now,
    deadlineAt: deadlineFrom(job.heartbeatTimeoutMs, now),
    graceFor: null,
    progress,
  };
  return decided(
    withJob(session, beat),
    {
      status: "running",
      cancel_requested: job.cancelRequested,
      heartbeat_timeout_ms: job.heartbeatTimeoutMs,
    },
    [],
    [{ type: "update_liveness", job: beat }],
  );
}

/**
 * A completion refused only for a full inbox counts as its job's heartbeat: the runner is alive and
 * holds the result until there is room, and it sends no heartbeat once its command ended.
 */
export const refusalIsHeartbeat = (code: string): boolean => code === "inbox_full";

export const heartbeatRule: Rule<HeartbeatCmd, HeartbeatReply> = {
  // As a completion: another lifetime's token loads nothing, a token with a `seq` no tombstone.
  needs: (core, cmd) =>
    core.lifetime !== cmd.lifetime ? {} : jobAndTombstone(cmd.handle, cmd.tokenSeq === null, false),
  absent: (cmd, ctx) => heartbeat(null, cmd, ctx.now),
  decide: ({ session }, cmd, ctx) => heartbeat(session, cmd, ctx.now),
};

/** Asks the runner to end a running job; asking again changes nothing. Never invents a result. */
export function requestCancel(
  session: Session,
  cmd: { handle: string },
): Decision<{ cancel_requested: true }> {
  const found = jobOfToken(session, cmd.handle, null);
  if (!found.ok) return found;
  const job = found.value;
  if (job.result !== null) {
    return fail("invalid_transition", `job ${cmd.handle} already has a result`);
  }
  if (job.cancelRequested) return decided(session, { cancel_requested: true });
  const asked: RunningJob = { ...job, cancelRequested: true };
  return decided(
    withJob(session, asked),
    { cancel_requested: true },
    [],
    [{ type: "update_liveness", job: asked }],
  );
}

/** The agent's cancel and the operator's: the same rule, each recorded as who asked. */
export const cancelRule = (
  by: "agent" | "operator",
): Rule<{ handle: string }, { cancel_requested: true }> => ({
  needs: (_, cmd) => jobAndTombstone(cmd.handle, true, false),
  decide: ({ session }, cmd) => requestCancel(session, cmd),
  events: (cmd, _, __, before): AuditEvent[] =>
    own(before.jobs, cmd.handle)?.cancelRequested === true
      ? []
      : by === "agent"
        ? [{ type: "cancel", handle: cmd.handle }]
        : [{ type: "operator", action: "cancel", handle: cmd.handle }],
});
