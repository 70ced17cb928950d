// Operator actions: redeliver a failed resume, expire a wait now, mark a running job
// lost. Each is a pure rule over the loaded session; recording it in the audit trail is the shell's.

import type { Ctx, Decision, Rule } from "./decision";
import { coreOnly, decided } from "./decision";
import { fail } from "./errors";
import { type CompletionReply, completeJob } from "./jobs";
import { own } from "./records";
import { type JobResult, jobStatus, type Session, sessionStatus } from "./state";
import { expireWait, scheduleResume, waitedJobs } from "./wake";

/** A failed resume gets a new one with a new `resume_id` and the same reason. */
export function redeliverFailed(
  session: Session,
  cmd: { resumeId: string },
  now: number,
): Decision<{ resume_id: string }> {
  const failed = session.resume;
  if (failed === null || failed.state !== "failed") {
    return fail("invalid_transition", "no resume of this session has failed");
  }
  if (session.run !== null) {
    return fail("invalid_transition", "a run is active: it sees the inbox without a resume");
  }
  const next = scheduleResume(
    { ...session, resume: null },
    failed.reason,
    cmd.resumeId,
    now,
  ).session;
  return decided(next, { resume_id: cmd.resumeId });
}

/** The armed wait ends now exactly as its ceiling would (it reads the jobs of the wait). */
export function expireWaitNow(
  session: Session,
  cmd: { resumeId: string },
  now: number,
): Decision<{ status: ReturnType<typeof sessionStatus> }> {
  const wait = session.wait;
  if (wait === null) return fail("invalid_transition", "no wait is armed");
  const expired = expireWait({ ...session, wait: { ...wait, ceilingAt: now } }, cmd.resumeId, now);
  return decided(expired.session, { status: sessionStatus(expired.session) }, [], expired.writes);
}

/**
 * A running job gets the result `lost` with no output, woken like any lost result: `endedBy` says
 * who ended it (null: nobody knows how it ended), `observed` whether the model was told already.
 */
export function loseRunningJob(
  session: Session,
  cmd: { handle: string; resumeId: string },
  ctx: Ctx,
  how: { endedBy: JobResult["endedBy"]; observed: boolean },
): Decision<CompletionReply> {
  const job = own(session.jobs, cmd.handle);
  if (job === undefined) return fail("not_found", `no job ${cmd.handle}`);
  if (jobStatus(job) !== "running") {
    return fail("invalid_transition", `job ${cmd.handle} already has a result`);
  }
  const result: JobResult = {
    status: "lost",
    exitCode: null,
    output: "",
    outputTruncated: false,
    outputBytesTotal: 0,
    endedBy: how.endedBy,
  };
  return completeJob(
    session,
    {
      lifetime: session.lifetime,
      handle: cmd.handle,
      tokenSeq: job.seq,
      result,
      observed: how.observed,
      resumeId: cmd.resumeId,
    },
    ctx,
  );
}

/** An operator's mark: the job is `lost`, ended by `operator`. */
export const markLost = (
  session: Session,
  cmd: { handle: string; resumeId: string },
  ctx: Ctx,
): Decision<CompletionReply> =>
  loseRunningJob(session, cmd, ctx, { endedBy: "operator", observed: false });

export const redeliverRule: Rule<{ resumeId: string }, { resume_id: string }> = {
  needs: coreOnly,
  decide: ({ session }, cmd, ctx) => redeliverFailed(session, cmd, ctx.now),
  events: (_, value) => [{ type: "operator", action: "redeliver", resume_id: value.resume_id }],
};

export const expireWaitRule: Rule<
  { resumeId: string },
  { status: ReturnType<typeof sessionStatus> }
> = {
  needs: (core) => ({ jobs: waitedJobs(core.wait) }),
  decide: ({ session }, cmd, ctx) => expireWaitNow(session, cmd, ctx.now),
  events: () => [{ type: "operator", action: "expire_wait" }],
};

export const markLostRule: Rule<{ handle: string; resumeId: string }, CompletionReply> = {
  needs: (_, cmd) => ({ jobs: { handles: [cmd.handle], output: true } }),
  decide: ({ session }, cmd, ctx) => markLost(session, cmd, ctx),
  events: (cmd) => [{ type: "operator", action: "mark_lost", handle: cmd.handle }],
};
