// The API views of a session, a job and a message (contract section 5), from the domain state and
// the counts the store reads in SQL. Status codes and serialization are left to the HTTP layer.
import type { Core, Job, Message } from "./state";
import {
  jobCompletedAt,
  jobStatus,
  resumeDeliveredAt,
  resumeEndedAt,
  resumeNextAttemptAt,
  sessionStatus,
} from "./state";
import { iso, isoOrNull } from "./text";
import type { WakeVia } from "./wake-path";

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
    output_bytes_total_known: result?.outputBytesTotalKnown ?? true,
    ended_by: result?.endedBy ?? null,
    reserved_at: iso(job.reservedAt),
    completed_at: isoOrNull(jobCompletedAt(job)),
    heartbeat_timeout_ms: job.heartbeatTimeoutMs,
    last_heartbeat_at: isoOrNull(job.lastHeartbeatAt),
    progress:
      job.result !== null || job.progress === null
        ? null
        : {
            output_tail: job.progress.outputTail,
            output_bytes_total: job.progress.outputBytesTotal,
            at: iso(job.progress.at),
          },
    cancel_requested: job.cancelRequested,
    full_output:
      result?.fullOutput === undefined
        ? null
        : { bytes: result.fullOutput.bytes, sha256: result.fullOutput.sha256 },
  };
}

export type JobView = ReturnType<typeof jobView>;

/** A job without its output (the list never carries outputs; the pull does). */
export function jobSummaryView(job: Job) {
  const { output: _output, ...summary } = jobView(job);
  return summary;
}

export type JobSummaryView = ReturnType<typeof jobSummaryView>;

export function messageView(message: Message) {
  return {
    index: message.index,
    role: message.role,
    content: message.content,
    metadata: message.metadata,
    created_at: iso(message.createdAt),
  };
}

export type MessageView = ReturnType<typeof messageView>;

/** Counts the view shows that live in rows, not in the core: read by the store for each view. */
interface RowCounts {
  readonly inbox: { readonly pending: number; readonly claimed: number };
  readonly jobs: { readonly running: number; readonly done: number };
  /** The base URL of the session's runner (its token is never shown); null: none named. */
  readonly runnerUrl: string | null;
}

/** While a wait is armed, metadata.runtime carries the suspend markers; clearing the wait drops them. */
function metadataView(session: Core): Record<string, unknown> {
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

/** `via`: how a wake would reach the agent now (wake-path.ts), decided by the caller from the settings. */
export function sessionView(session: Core, counts: RowCounts, via: WakeVia) {
  const { wait, run, resume } = session;
  return {
    id: session.id,
    tenant: session.tenant,
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
    message_count: session.messageCount,
    inbox: {
      pending: counts.inbox.pending,
      claimed: counts.inbox.claimed,
      generation: session.generation,
    },
    resume:
      resume === null
        ? null
        : {
            resume_id: resume.resumeId,
            reason: resume.reason,
            state: resume.state,
            attempts: resume.attempts,
            created_at: iso(resume.createdAt),
            next_attempt_at: isoOrNull(resumeNextAttemptAt(resume)),
            delivered_at: isoOrNull(resumeDeliveredAt(resume)),
            last_error: resume.lastError,
            ended_at: isoOrNull(resumeEndedAt(resume)),
          },
    jobs: { running: counts.jobs.running, done: counts.jobs.done },
    notify_seq: session.notifySeq,
    resume_url: session.resumeUrl,
    resume_binding: session.resumeBinding,
    wake: { via },
    runner: counts.runnerUrl === null ? null : { url: counts.runnerUrl },
  };
}

export type SessionView = ReturnType<typeof sessionView>;
