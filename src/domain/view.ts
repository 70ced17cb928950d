// The API views of a session and a job (contract section 5), derived from the domain state alone.
// Status codes and serialization are left to the HTTP layer.
import { inboxCounts } from "./inbox";
import type { Job, Session } from "./state";
import { jobStatus, sessionStatus } from "./state";
import { iso, isoOrNull } from "./text";

export function jobView(job: Job) {
  const result = job.result;
  return {
    handle: job.handle,
    command: job.command,
    lifetime: job.lifetime,
    status: jobStatus(job),
    exit_code: result?.exitCode ?? null,
    output: result?.output ?? "",
    output_truncated: result?.outputTruncated ?? false,
    output_bytes_total: result?.outputBytesTotal ?? 0,
    ended_by: result?.endedBy ?? null,
    reserved_at: iso(job.reservedAt),
    completed_at: isoOrNull(job.completedAt),
  };
}

export type JobView = ReturnType<typeof jobView>;

/** While a wait is armed, metadata.runtime carries the suspend markers; clearing the wait drops them. */
function metadataView(session: Session): Record<string, unknown> {
  const { runtime, ...rest } = session.metadata;
  const base = typeof runtime === "object" && runtime !== null ? { ...(runtime as object) } : null;
  if (session.wait === null) return base === null ? rest : { ...rest, runtime: base };
  return {
    ...rest,
    runtime: {
      ...base,
      suspend_reason: "waiting_for_bash",
      background_exec_id: session.wait.handles.join(","),
    },
  };
}

export function sessionView(session: Session, now: number) {
  const { wait, run, resume } = session;
  const counts = inboxCounts(session, now);
  const jobs = Object.values(session.jobs);
  const running = jobs.filter((job) => job.result === null).length;
  return {
    id: session.id,
    lifetime: session.lifetime,
    created_at: iso(session.createdAt),
    status: sessionStatus(session),
    run:
      run === null
        ? null
        : { run_id: run.runId, resume_id: run.resumeId, registered_at: iso(run.registeredAt) },
    waiting_for_bash:
      wait === null
        ? null
        : {
            handles: [...wait.handles],
            wake: wait.wake,
            since: iso(wait.since),
            ceiling_at: iso(wait.ceilingAt),
          },
    suspension:
      wait === null
        ? null
        : { reason: "waiting_for_bash" as const, suspended_at: iso(wait.since), resumable: true },
    metadata: metadataView(session),
    messages: session.messages.map((message) => ({
      index: message.index,
      role: message.role,
      content: message.content,
      metadata: message.metadata,
      created_at: iso(message.createdAt),
    })),
    inbox: { pending: counts.pending, claimed: counts.claimed, generation: counts.generation },
    resume:
      resume === null
        ? null
        : {
            resume_id: resume.resumeId,
            reason: resume.reason,
            state: resume.state,
            attempts: resume.attempts,
            created_at: iso(resume.createdAt),
            next_attempt_at: isoOrNull(resume.nextAttemptAt),
            delivered_at: isoOrNull(resume.deliveredAt),
            last_error: resume.lastError,
            ended_at: isoOrNull(resume.endedAt),
          },
    jobs: { running, done: jobs.length - running },
    notify_seq: session.notifySeq,
    resume_url: session.resumeUrl,
  };
}

export type SessionView = ReturnType<typeof sessionView>;
