// Timer rules: wait ceilings, resume delivery attempts with backoff, claim-timeout redelivery, purge.
// The HTTP POST itself and the physical alarm are left to the shell.
import type { Ctx, Decision, Effect } from "./decision";
import { decided } from "./decision";
import { inboxCounts } from "./inbox";
import type { Resume, Session } from "./state";
import { expireWait } from "./wake";

const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 5 * 60 * 1000;

/** Exponential backoff with jitter for the `attempt`-th delivery (1-based), within 1 s … 5 min. */
export function backoffMs(attempt: number, random: number): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.max(0, attempt - 1));
  const jittered = base / 2 + (random * base) / 2;
  return Math.round(Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_MIN_MS, jittered)));
}

const isDeliverable = (resume: Resume | null): resume is Resume =>
  resume !== null && (resume.state === "scheduled" || resume.state === "delivered");

function purgeExpired(session: Session, ctx: Ctx): Session {
  const horizon = ctx.now - ctx.config.jobRetentionMs;
  const expired = Object.values(session.jobs).filter(
    (job) => job.completedAt !== null && job.completedAt <= horizon,
  );
  const staleAcks = Object.values(session.inbox).filter(
    (item) => item.ackedAt !== null && item.ackedAt <= horizon,
  );
  if (expired.length === 0 && staleAcks.length === 0) return session;
  const jobs = { ...session.jobs };
  const purged = { ...session.purged };
  for (const job of expired) {
    delete jobs[job.handle];
    purged[job.handle] = ctx.now;
  }
  const inbox = { ...session.inbox };
  for (const item of staleAcks) delete inbox[item.envelope.id];
  return { ...session, jobs, purged, inbox };
}

function attemptResume(
  session: Session,
  ctx: Ctx,
  random: number,
): { session: Session; effects: Effect[] } {
  const resume = session.resume;
  if (!isDeliverable(resume) || resume.nextAttemptAt === null || resume.nextAttemptAt > ctx.now) {
    return { session, effects: [] };
  }
  if (resume.attempts >= ctx.config.resumeMaxAttempts) {
    const failed: Resume = { ...resume, state: "failed", nextAttemptAt: null, endedAt: ctx.now };
    return { session: { ...session, resume: failed }, effects: [] };
  }
  // Resolved at each attempt, so a changed RESUME_WEBHOOK_URL applies to pending resumes.
  const url = session.resumeUrl ?? ctx.config.resumeWebhookUrl;
  if (url === null) {
    const waiting: Resume = { ...resume, state: "no_target", nextAttemptAt: null };
    return { session: { ...session, resume: waiting }, effects: [] };
  }
  const attempt = resume.attempts + 1;
  // Recorded before the POST as if it will fail, so a crash mid-delivery retries on schedule.
  const started: Resume = {
    ...resume,
    attempts: attempt,
    lastAttemptAt: ctx.now,
    nextAttemptAt: ctx.now + backoffMs(attempt, random),
  };
  const effect: Effect = {
    type: "deliver_resume",
    url,
    attempt,
    payload: {
      type: "session.resume",
      session_id: session.id,
      lifetime: session.lifetime,
      resume_id: resume.resumeId,
      reason: resume.reason,
      inbox: { pending: inboxCounts(session, ctx.now).pending },
    },
  };
  return { session: { ...session, resume: started }, effects: [effect] };
}

/** Runs every timer due at `ctx.now`; safe to run twice (a fired timer leaves nothing due). */
export function tick(
  session: Session,
  cmd: { resumeId: string; random: number },
  ctx: Ctx,
): Decision<null> {
  const afterCeiling = expireWait(session, cmd.resumeId, ctx.now);
  const afterPurge = purgeExpired(afterCeiling, ctx);
  const attempted = attemptResume(afterPurge, ctx, cmd.random);
  return decided(attempted.session, null, attempted.effects);
}

export function recordDelivery(
  session: Session,
  cmd: { resumeId: string; delivered: boolean; error: string | null },
  ctx: Ctx,
): Decision<null> {
  const resume = session.resume;
  // A run may have taken the resume (or a newer one replaced it) while the POST was in flight.
  if (!isDeliverable(resume) || resume.resumeId !== cmd.resumeId) return decided(session, null);
  if (cmd.delivered) {
    const delivered: Resume = {
      ...resume,
      state: "delivered",
      deliveredAt: ctx.now,
      lastError: null,
      nextAttemptAt: ctx.now + ctx.config.resumeClaimTimeoutMs,
    };
    return decided({ ...session, resume: delivered }, null);
  }
  const failedForGood = resume.attempts >= ctx.config.resumeMaxAttempts;
  const next: Resume = failedForGood
    ? { ...resume, state: "failed", nextAttemptAt: null, endedAt: ctx.now, lastError: cmd.error }
    : { ...resume, lastError: cmd.error };
  return decided({ ...session, resume: next }, null);
}

/** The earliest time any timer of the session falls due; null when nothing is pending. */
export function nextDueAt(session: Session, ctx: Pick<Ctx, "config">): number | null {
  const times: number[] = [];
  if (session.wait !== null) times.push(session.wait.ceilingAt);
  if (isDeliverable(session.resume) && session.resume.nextAttemptAt !== null) {
    times.push(session.resume.nextAttemptAt);
  }
  for (const job of Object.values(session.jobs)) {
    if (job.completedAt !== null) times.push(job.completedAt + ctx.config.jobRetentionMs);
  }
  for (const item of Object.values(session.inbox)) {
    if (item.ackedAt !== null) times.push(item.ackedAt + ctx.config.jobRetentionMs);
  }
  return times.length === 0 ? null : Math.min(...times);
}
