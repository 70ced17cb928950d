// The wake table of contract section 6: what an admission, a suspend or a ceiling does to a session.
// Delivering a scheduled resume is left to the delivery rules and the alarm.

import type { Write } from "./decision";
import { admit } from "./inbox";
import { waitExpiredEnvelope } from "./messages";
import { own } from "./records";
import type { Envelope, Job, Resume, ResumeReason, Session, Wait } from "./state";
import { isResumePending, jobStatus, resultInstruction } from "./state";

export type Disposition =
  | "resume_scheduled"
  | "active_run_notified"
  | "staged"
  | "queued"
  | "observed";

/** One wake = one resume: while a resume is pending, a new wake coalesces into it. */
export function scheduleResume(
  session: Session,
  reason: ResumeReason,
  resumeId: string,
  now: number,
): { session: Session; scheduled: boolean } {
  if (isResumePending(session.resume)) return { session, scheduled: false };
  const resume: Resume = {
    resumeId,
    reason,
    state: "scheduled",
    attempts: 0,
    createdAt: now,
    nextAttemptAt: now,
    lastAttemptAt: null,
    lastError: null,
  };
  return { session: { ...session, resume }, scheduled: true };
}

/** Removes a finished handle from the wait; `met` says the wake condition now holds. */
function releaseHandle(
  wait: Wait | null,
  handle: string,
): { wait: Wait | null; waited: boolean; met: boolean } {
  if (wait === null || !wait.handles.includes(handle)) return { wait, waited: false, met: false };
  const handles = wait.handles.filter((waited) => waited !== handle);
  const met = wait.wake === "any" || handles.length === 0;
  return { wait: met ? null : { ...wait, handles }, waited: true, met };
}

export const reasonForResult = (job: Job): ResumeReason =>
  job.result === null ? "background_exec_completed" : resultInstruction(job.result.status);

/**
 * Applies a terminal result already written to `job` (contract section 6 table). Without an
 * envelope (an observed result) the result still releases the wait but wakes nobody.
 */
export function wakeForResult(
  before: Session,
  job: Extract<Job, { completedAt: number }>,
  envelope: Envelope | null,
  resumeId: string,
  now: number,
): { session: Session; disposition: Disposition; writes: Write[] } {
  const release = releaseHandle(before.wait, job.handle);
  const stored: Session = {
    ...before,
    jobs: { ...before.jobs, [job.handle]: job },
    wait: release.wait,
  };
  const completed: Write = { type: "complete_job", job };
  if (envelope === null) return { session: stored, disposition: "observed", writes: [completed] };

  const admitted = admit(stored, envelope);
  const writes = [completed, admitted.write];
  if (before.run !== null) {
    return {
      session: { ...admitted.session, notifySeq: admitted.session.notifySeq + 1 },
      disposition: "active_run_notified",
      writes,
    };
  }
  if (before.wait !== null && !release.met) {
    return { session: admitted.session, disposition: "staged", writes };
  }
  const woken = scheduleResume(admitted.session, reasonForResult(job), resumeId, now);
  return {
    session: woken.session,
    disposition: woken.scheduled ? "resume_scheduled" : "queued",
    writes,
  };
}

/** The jobs a ceiling reads: those the armed wait still holds. */
export const waitedJobs = (wait: Wait | null) => ({
  handles: wait === null ? [] : wait.handles,
  output: false,
});

/**
 * The ceiling passed with the wait still armed: say so (never as a completion) and wake. Reads
 * the jobs of the wait (`waitedJobs`).
 */
export function expireWait(
  session: Session,
  resumeId: string,
  now: number,
): { session: Session; writes: Write[] } {
  const wait = session.wait;
  if (wait === null || wait.ceilingAt > now) return { session, writes: [] };
  const pendingHandles = wait.handles.filter((handle) => {
    const job = own(session.jobs, handle);
    return job !== undefined && jobStatus(job) === "running";
  });
  const handles = pendingHandles.length > 0 ? pendingHandles : wait.handles;
  const generation = session.generation + 1;
  // A runtime notice is admitted even over the backlog limit: a wake must never be dropped.
  const admitted = admit(
    { ...session, wait: null },
    waitExpiredEnvelope(session.lifetime, handles, wait.since, generation, now),
  );
  const writes = [admitted.write];
  if (session.run !== null) {
    return { session: { ...admitted.session, notifySeq: admitted.session.notifySeq + 1 }, writes };
  }
  const woken = scheduleResume(admitted.session, "background_exec_wait_expired", resumeId, now);
  return { session: woken.session, writes };
}
