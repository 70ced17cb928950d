// Timer rules: wait ceilings, resume delivery attempts with backoff, claim-timeout redelivery, purge.
// The HTTP POST itself and the physical alarm are left to the shell.

import { assertNever } from "./assert-never";
import type { AuditEvent } from "./audit";
import type { Ctx, Decision, Effect, Overdue, ResumePayload, Rule, Write } from "./decision";
import { coreOnly, decided } from "./decision";
import { claimableChange } from "./inbox";
import { expireSilent, overdueNeeds, type SilentLoss } from "./liveness";
import { copyOf } from "./records";
import { checkResumeUrl } from "./resume-url";
import type { Core, Resume, Session } from "./state";
import { jobCompletedAt, resumeDeliveredAt, resumeFields } from "./state";
import { expireWait, waitedJobs } from "./wake";

const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 5 * 60 * 1000;
/** The contract's timeout of one resume POST. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * While an attempt is on the wire its resume is due again only after the POST must have ended:
 * the alarm never fires into a running attempt, and a crash mid-delivery still retries.
 */
export const IN_FLIGHT_MARGIN_MS = 5_000;

/** Exponential backoff with jitter for the `attempt`-th delivery (1-based), within 1 s … 5 min. */
export function backoffMs(attempt: number, random: number): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.max(0, attempt - 1));
  const jittered = base / 2 + (random * base) / 2;
  return Math.round(Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_MIN_MS, jittered)));
}

type Deliverable = Extract<Resume, { state: "scheduled" | "delivered" }>;

function isDeliverable(resume: Resume | null): resume is Deliverable {
  if (resume === null) return false;
  switch (resume.state) {
    case "scheduled":
    case "delivered":
      return true;
    case "no_target":
    case "completed":
    case "failed":
      return false;
    default:
      return assertNever(resume);
  }
}

/** A resume the alarm stops delivering: out of attempts, or its origin was withdrawn. */
const failedResume = (resume: Resume, now: number, lastError: string | null): Resume => ({
  ...resumeFields(resume),
  lastError,
  state: "failed",
  deliveredAt: resumeDeliveredAt(resume),
  endedAt: now,
});

/** The earliest completion, ack or purge time among the given rows: when retention next bites. */
export function oldestRetained(session: Session): number | null {
  const times = [
    ...Object.values(session.jobs).flatMap((job) => jobCompletedAt(job) ?? []),
    ...Object.values(session.inbox).flatMap((item) => item.ackedAt ?? []),
    ...Object.values(session.purged),
  ];
  return times.length === 0 ? null : Math.min(...times);
}

/**
 * Retention: jobs completed and items acked at or before the horizon go; a purged handle keeps a
 * tombstone for one more retention period (its pull says 410, not 404), then that goes too. The
 * loaded rows are purged here; the `purge_before` write applies the same horizon to every row.
 */
export function purgeExpired(session: Session, horizon: number, now: number): Session {
  const expired = Object.values(session.jobs).filter((job) => {
    const completedAt = jobCompletedAt(job);
    return completedAt !== null && completedAt <= horizon;
  });
  const staleAcks = Object.values(session.inbox).filter(
    (item) => item.ackedAt !== null && item.ackedAt <= horizon,
  );
  const staleTombs = Object.entries(session.purged).filter(([, purgedAt]) => purgedAt <= horizon);
  if (expired.length === 0 && staleAcks.length === 0 && staleTombs.length === 0) return session;
  const jobs = copyOf(session.jobs);
  const purged = copyOf(session.purged);
  for (const [handle] of staleTombs) delete purged[handle];
  for (const job of expired) {
    delete jobs[job.handle];
    purged[job.handle] = now;
  }
  const inbox = copyOf(session.inbox);
  for (const item of staleAcks) delete inbox[item.envelope.id];
  return { ...session, jobs, purged, inbox };
}

function attemptResume(
  session: Session,
  pending: number,
  ctx: Ctx,
): { session: Session; effects: Effect[] } {
  const resume = session.resume;
  if (!isDeliverable(resume) || resume.nextAttemptAt > ctx.now || ctx.postOnWire === true) {
    return { session, effects: [] };
  }
  if (resume.attempts >= ctx.config.resumeMaxAttempts) {
    const failed = failedResume(resume, ctx.now, resume.lastError);
    return { session: { ...session, resume: failed }, effects: [] };
  }
  if (session.resumeBinding !== null) {
    return attemptThroughBinding(session, session.resumeBinding, resume, pending, ctx);
  }
  // Resolved at each attempt, so a changed RESUME_WEBHOOK_URL applies to pending resumes.
  const url = session.resumeUrl ?? ctx.config.resumeWebhookUrl;
  if (url === null) {
    const waiting: Resume = {
      ...resumeFields(resume),
      state: "no_target",
      deliveredAt: resumeDeliveredAt(resume),
    };
    return { session: { ...session, resume: waiting }, effects: [] };
  }
  // The host chose resume_url once; the operator may have withdrawn its origin since.
  const allowed =
    session.resumeUrl === null || checkResumeUrl(url, ctx.config.resumeUrlAllowlist).ok;
  if (!allowed) {
    const stopped = failedResume(
      resume,
      ctx.now,
      `delivery stopped: the origin of resume_url ${new URL(url).origin} is no longer in RESUME_URL_ALLOWLIST`,
    );
    return { session: { ...session, resume: stopped }, effects: [] };
  }
  const started = startedAttempt(resume, ctx.now);
  const effect: Effect = {
    type: "deliver_resume",
    url,
    attempt: started.attempts,
    payload: resumePayload(session, resume, pending),
  };
  return { session: { ...session, resume: started }, effects: [effect] };
}

/** Recorded before the call, so a crash mid-delivery counts the attempt and retries after it. */
const startedAttempt = (resume: Deliverable, now: number): Deliverable => ({
  ...resume,
  attempts: resume.attempts + 1,
  lastAttemptAt: now,
  nextAttemptAt: now + DELIVERY_TIMEOUT_MS + IN_FLIGHT_MARGIN_MS,
});

/** The body of a wake, the same object for the webhook and the binding. */
const resumePayload = (session: Session, resume: Deliverable, pending: number): ResumePayload => ({
  type: "session.resume",
  tenant: session.tenant,
  session_id: session.id,
  lifetime: session.lifetime,
  resume_id: resume.resumeId,
  reason: resume.reason,
  inbox: { pending },
});

/**
 * A session that named a binding is woken only through it: never through a webhook URL, not even
 * the tenant's default. Its allowlist is read again here, as the URL's is: an operator who removes
 * the binding stops the deliveries, and the resume fails visibly, naming the allowlist.
 */
function attemptThroughBinding(
  session: Session,
  binding: string,
  resume: Deliverable,
  pending: number,
  ctx: Ctx,
): { session: Session; effects: Effect[] } {
  if (!ctx.config.resumeBindingAllowlist.includes(binding)) {
    const stopped = failedResume(
      resume,
      ctx.now,
      `delivery stopped: resume_binding ${binding} is no longer in RESUME_BINDING_ALLOWLIST`,
    );
    return { session: { ...session, resume: stopped }, effects: [] };
  }
  const started = startedAttempt(resume, ctx.now);
  const effect: Effect = {
    type: "wake_binding",
    binding,
    attempt: started.attempts,
    payload: resumePayload(session, resume, pending),
  };
  return { session: { ...session, resume: started }, effects: [effect] };
}

/**
 * Runs every timer due at `ctx.now`; safe to run twice (a fired timer leaves nothing due).
 * `pending` counts the claimable items and `retainedSince` is `oldestRetained` over all rows (the
 * shell reads both in SQL). The value is the retention horizon the shell applies to unloaded rows.
 */
export function tick(
  session: Session,
  cmd: {
    resumeId: string;
    pending: number;
    retainedSince: number | null;
    overdue?: Overdue | null;
  },
  ctx: Ctx,
): Decision<TickValue> {
  // Silent jobs first: a result that arrives with the ceiling counts for the wait.
  const silent =
    cmd.overdue === null || cmd.overdue === undefined
      ? { session, writes: [], lost: [] }
      : expireSilent(session, cmd.overdue, cmd.resumeId, ctx);
  const ceiling = expireWait(silent.session, cmd.resumeId, ctx.now);
  const afterCeiling = ceiling.session;
  const horizon = ctx.now - ctx.config.jobRetentionMs;
  const purgeBefore = cmd.retainedSince !== null && cmd.retainedSince <= horizon ? horizon : null;
  const afterPurge =
    purgeBefore === null ? afterCeiling : purgeExpired(afterCeiling, purgeBefore, ctx.now);
  const writes: Write[] = [...silent.writes, ...ceiling.writes];
  if (purgeBefore !== null)
    writes.push({ type: "purge_before", horizon: purgeBefore, now: ctx.now });
  // Each silent loss and a ceiling that fired admitted an envelope, still pending.
  const pending = cmd.pending + (afterCeiling.unacked - session.unacked);
  const attempted = attemptResume(afterPurge, pending, ctx);
  return decided(
    attempted.session,
    {
      purgeBefore,
      lost: silent.lost,
      // Only the ceiling clears a wait in expireWait; a silent loss may have cleared it before.
      ceiling:
        silent.session.wait !== null && ceiling.session.wait === null
          ? silent.session.wait.handles
          : null,
    },
    attempted.effects,
    writes,
  );
}

type TickValue = {
  purgeBefore: number | null;
  lost: readonly SilentLoss[];
  ceiling: readonly string[] | null;
};

/** The alarm's command: every due timer. */
export const tickRule: Rule<{ resumeId: string }, TickValue> = {
  needs: (core, _, now) => ({
    jobs: waitedJobs(core.wait),
    pending: true,
    ...overdueNeeds(core, now),
  }),
  decide: ({ session, pending, retainedSince, overdue }, cmd, ctx) =>
    tick(session, { resumeId: cmd.resumeId, pending: pending(), retainedSince, overdue }, ctx),
  events: (_, value) => [
    ...value.lost.map(
      (loss): AuditEvent => ({
        type: "completion",
        handle: loss.handle,
        outcome: "accepted",
        disposition: loss.disposition,
        ended_by: "heartbeat_timeout",
      }),
    ),
    ...(value.ceiling === null ? [] : [{ type: "ceiling" as const, handles: value.ceiling }]),
  ],
};

/**
 * Folds the first attempt of a resume that `decision` created, due now, into the same decision:
 * one transaction records the wake and the attempt, and the POST follows that one commit instead
 * of a second. A resume that existed before (a redelivery that fell due) is left to the timers,
 * which run the ceiling and retention before it. `pendingBefore` counts the claimable items before
 * the decision (read in SQL by the shell, only when a resume is folded); the decision's own change
 * of the rows it was given is added to it.
 */
export function withDueAttempt<T>(
  before: Session | null,
  decision: Decision<T>,
  pendingBefore: () => number,
  ctx: Ctx,
): Decision<T> {
  if (!decision.ok || decision.state === null || ctx.config.deliveriesPaused === true) {
    return decision;
  }
  const resume = decision.state.resume;
  if (!isDeliverable(resume) || resume.nextAttemptAt > ctx.now) return decision;
  if (before?.resume?.resumeId === resume.resumeId) return decision;
  const pending = pendingBefore() + claimableChange(before, decision.writes, ctx.now);
  const attempted = attemptResume(decision.state, pending, ctx);
  return decided(
    attempted.session,
    decision.value,
    [...decision.effects, ...attempted.effects],
    decision.writes,
  );
}

/** `random` jitters the backoff, which counts from now: the end of the attempt. */
export function recordDelivery(
  session: Session,
  cmd: { resumeId: string; delivered: boolean; error: string | null; random: number },
  ctx: Ctx,
): Decision<null> {
  const resume = session.resume;
  // A run may have taken the resume (or a newer one replaced it) while the POST was in flight.
  if (!isDeliverable(resume) || resume.resumeId !== cmd.resumeId) return decided(session, null);
  if (cmd.delivered) {
    const delivered: Resume = {
      ...resumeFields(resume),
      state: "delivered",
      deliveredAt: ctx.now,
      lastError: null,
      nextAttemptAt: ctx.now + ctx.config.resumeClaimTimeoutMs,
    };
    return decided({ ...session, resume: delivered }, null);
  }
  const failedForGood = resume.attempts >= ctx.config.resumeMaxAttempts;
  const next: Resume = failedForGood
    ? failedResume(resume, ctx.now, cmd.error)
    : {
        ...resume,
        lastError: cmd.error,
        nextAttemptAt: ctx.now + backoffMs(resume.attempts, cmd.random),
      };
  return decided({ ...session, resume: next }, null);
}

type DeliveryCmd = Parameters<typeof recordDelivery>[1];

/**
 * An attempt's outcome, recorded after the POST; `event` is the trail's record of it. `lifetime`
 * is the one the attempt woke: a delivery that outlived it (the session was deleted and created
 * again while the POST or the wake was on the wire) changes nothing and is not put into the new
 * lifetime's trail. Within its lifetime the event is recorded as before, also when a run took the
 * resume meanwhile.
 */
export const recordDeliveryRule: Rule<DeliveryCmd & { lifetime: string; event: AuditEvent }, null> =
  {
    needs: coreOnly,
    decide: ({ session }, cmd, ctx) =>
      session.lifetime === cmd.lifetime
        ? recordDelivery(session, cmd, ctx)
        : decided(session, null),
    events: (cmd, _value, _state, before) => (before.lifetime === cmd.lifetime ? [cmd.event] : []),
  };

/**
 * The earliest time any timer of the session falls due; null when nothing is pending. With
 * `postOnWire`, the times that can run now: ceilings and retention, not the next attempt.
 */
export function nextDueAt(
  session: Core,
  retainedSince: number | null,
  ctx: Pick<Ctx, "config" | "postOnWire">,
): number | null {
  const times: number[] = [];
  if (session.wait !== null) times.push(session.wait.ceilingAt);
  if (session.livenessDueAt !== null) times.push(session.livenessDueAt);
  // An attempt cannot start while another POST is on the wire: it is not due until that ends.
  if (isDeliverable(session.resume) && ctx.postOnWire !== true) {
    times.push(session.resume.nextAttemptAt);
  }
  if (retainedSince !== null) times.push(retainedSince + ctx.config.jobRetentionMs);
  return times.length === 0 ? null : Math.min(...times);
}
