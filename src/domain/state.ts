// The shape of one session lifetime as the rules see it: a small core plus the rows a rule touches.
// Which rows are loaded for a rule, and persisting them, is left to the session-object store.
import { assertNever } from "./assert-never";
import type { EndedBy, JobStatus, TerminalStatus } from "./schemas";

export type Role = "user" | "assistant" | "system" | "tool";
export type Wake = "all" | "any";

export interface Message {
  readonly index: number;
  readonly role: Role;
  readonly content: unknown;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
}

export interface Run {
  readonly runId: string;
  readonly resumeId: string | null;
  readonly registeredAt: number;
}

export interface Wait {
  /** Handles still awaited; a completion removes its handle. */
  readonly handles: readonly string[];
  readonly wake: Wake;
  readonly since: number;
  readonly ceilingAt: number;
}

export const RESUME_REASONS = [
  "background_exec_completed",
  "background_exec_wait_expired",
  "background_exec_outcome_unknown",
  "inbox_pending",
] as const;
export type ResumeReason = (typeof RESUME_REASONS)[number];

interface ResumeFields {
  readonly resumeId: string;
  readonly reason: ResumeReason;
  /** Deliveries started so far, the first included (a crash mid-delivery still counts). */
  readonly attempts: number;
  readonly createdAt: number;
  readonly lastAttemptAt: number | null;
  readonly lastError: string | null;
}

/**
 * One wake, by state: only a resume the alarm still delivers has a `nextAttemptAt`, only an ended
 * one an `endedAt`; a delivered one knows when. The session table's CHECK mirrors this union.
 */
export type Resume =
  /** Waiting for its first delivery, due at `nextAttemptAt`. */
  | (ResumeFields & { readonly state: "scheduled"; readonly nextAttemptAt: number })
  /** The host answered 2xx; redelivered at `nextAttemptAt` (the claim timeout) unless a run takes it. */
  | (ResumeFields & {
      readonly state: "delivered";
      readonly nextAttemptAt: number;
      readonly deliveredAt: number;
    })
  /** No resume URL: it waits, undelivered, for a run to take it. */
  | (ResumeFields & { readonly state: "no_target"; readonly deliveredAt: number | null })
  /** A run took it. */
  | (ResumeFields & {
      readonly state: "completed";
      readonly deliveredAt: number | null;
      readonly endedAt: number;
    })
  /** Out of attempts, or its origin left the allowlist: the inbox keeps everything. */
  | (ResumeFields & {
      readonly state: "failed";
      readonly deliveredAt: number | null;
      readonly endedAt: number;
    });
export type ResumeState = Resume["state"];

/** When the alarm next (re)delivers; null once no delivery is due. */
export function resumeNextAttemptAt(resume: Resume): number | null {
  switch (resume.state) {
    case "scheduled":
    case "delivered":
      return resume.nextAttemptAt;
    case "no_target":
    case "completed":
    case "failed":
      return null;
    default:
      return assertNever(resume);
  }
}

export function resumeDeliveredAt(resume: Resume): number | null {
  switch (resume.state) {
    case "scheduled":
      return null;
    case "delivered":
    case "no_target":
    case "completed":
    case "failed":
      return resume.deliveredAt;
    default:
      return assertNever(resume);
  }
}

export function resumeEndedAt(resume: Resume): number | null {
  switch (resume.state) {
    case "scheduled":
    case "delivered":
    case "no_target":
      return null;
    case "completed":
    case "failed":
      return resume.endedAt;
    default:
      return assertNever(resume);
  }
}

/** The fields every state keeps; a transition adds the ones of the state it enters. */
export const resumeFields = (resume: Resume): ResumeFields => ({
  resumeId: resume.resumeId,
  reason: resume.reason,
  attempts: resume.attempts,
  createdAt: resume.createdAt,
  lastAttemptAt: resume.lastAttemptAt,
  lastError: resume.lastError,
});

export interface JobResult {
  readonly status: TerminalStatus;
  readonly exitCode: number | null;
  readonly output: string;
  readonly outputTruncated: boolean;
  readonly outputBytesTotal: number;
  /**
   * False when the runner sent no total for a cut output: `outputBytesTotal` is then only the cut
   * output's own size, and no text states it as the command's. Absent: known.
   */
  readonly outputBytesTotalKnown?: boolean;
  /** `operator`: an operator marked the job lost (never sent by a runner). */
  /** `heartbeat_timeout`: the runner fell silent past the job's timeout (liveness.ts). */
  readonly endedBy: EndedBy | "operator" | "heartbeat_timeout" | null;
  /** The full output the completion named, its parts in R2 (full-output.ts); absent: none. */
  readonly fullOutput?: FullOutput;
}

/** A full output's reference: the session keeps this, the bytes live in R2 (full-output.ts). */
export interface FullOutput {
  readonly bytes: number;
  readonly sha256: string;
  /** In order: part `i` starts after the bytes of the parts before it. */
  readonly parts: readonly { readonly bytes: number; readonly sha256: string }[];
}

interface JobFields {
  readonly handle: string;
  /** Reservation number within the lifetime (1, 2, …), bound into the callback token: a fence. */
  readonly seq: number;
  readonly command: string;
  readonly lifetime: string;
  readonly reservedAt: number;
  /** The callback capability handed out at reservation; returned again on an identical reservation. */
  readonly callbackToken: string;
  /** Liveness: silence this long makes a running job lost (null: no check). */
  readonly heartbeatTimeoutMs: number | null;
  readonly lastHeartbeatAt: number | null;
  /** When silence makes the job lost (its timeout from the last heartbeat, or a grace); null once it has a result or when it has no timeout. */
  readonly deadlineAt: number | null;
  /** The service start a grace was given for since the runner was last heard (liveness.ts). */
  readonly graceFor: number | null;
  /** The last progress a heartbeat carried; null once the result replaces it. */
  readonly progress: Progress | null;
  /** The agent or an operator asked the runner to end the command (the next heartbeat says so). */
  readonly cancelRequested: boolean;
  /** Bytes of full-output parts accepted for upload so far, re-sends included; absent: none. */
  readonly uploadedBytes?: number;
}

export interface Progress {
  readonly outputTail: string;
  readonly outputBytesTotal: number | null;
  readonly at: number;
}

/** A job runs until its one result arrives; only then has it a completion time. The jobs table's CHECK mirrors this. */
export type Job =
  | (JobFields & { readonly result: null })
  | (JobFields & {
      readonly result: JobResult;
      readonly completedAt: number;
      /** Generation of the envelope this result admitted; null when none was made (observed). */
      readonly generation: number | null;
    });

export const jobCompletedAt = (job: Job): number | null =>
  job.result === null ? null : job.completedAt;

export const jobStatus = (job: Job): JobStatus => job.result?.status ?? "running";

/** The instruction a terminal result wakes the agent with: only `lost` leaves the outcome unknown. */
export function resultInstruction(
  status: TerminalStatus,
): "background_exec_completed" | "background_exec_outcome_unknown" {
  switch (status) {
    case "completed":
    case "failed":
    case "killed":
      return "background_exec_completed";
    case "lost":
      return "background_exec_outcome_unknown";
    default:
      return assertNever(status);
  }
}

export type Instruction =
  | "background_exec_completed"
  | "background_exec_wait_expired"
  | "background_exec_outcome_unknown";

type EnvelopeState = "pending" | "claimed" | "acked";

export interface Envelope {
  readonly id: string;
  readonly generation: number;
  readonly kind: "runtime_instruction";
  readonly source: { readonly type: "runtime"; readonly subsystem: "background_exec" };
  readonly body: {
    readonly type: "runtime_instruction";
    readonly instruction: Instruction;
    readonly data: Readonly<Record<string, unknown>>;
  };
  readonly created_at: string;
  readonly correlation_id: string;
}

export interface InboxItem {
  readonly envelope: Envelope;
  readonly state: EnvelopeState;
  readonly leaseExpiresAt: number | null;
  readonly ackedAt: number | null;
}

/**
 * The core (identity, run, wait, resume, counters) is what the session object keeps in memory.
 * `messages`, `jobs`, `inbox`, `purged` and `finishedRuns` hold only the rows a rule was given or
 * wrote: the
 * shell loads the ones a command touches and keeps none of them; a test model may hold them all.
 */
export interface Session {
  /** The tenant the session belongs to (its object name carries it too). */
  readonly tenant: string;
  readonly id: string;
  readonly lifetime: string;
  readonly createdAt: number;
  readonly resumeUrl: string | null;
  /** The service binding woken instead of a webhook (resume_binding); null: the webhook. */
  readonly resumeBinding: string | null;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Loaded or appended messages; the shell loads none, so it holds what a decision appended. */
  readonly messages: readonly Message[];
  /** Messages stored so far in this lifetime: the next message's index. */
  readonly messageCount: number;
  /** Bytes of the messages stored so far (their role, content and metadata as JSON): the quota's count. */
  readonly messageBytes: number;
  /** Reservations made so far in this lifetime: the last job's `seq`. */
  readonly jobSeq: number;
  /** Inbox items admitted and not yet acked (the backlog the limit counts). */
  readonly unacked: number;
  readonly run: Run | null;
  readonly wait: Wait | null;
  readonly resume: Resume | null;
  readonly notifySeq: number;
  /** Last generation handed to an envelope of this lifetime. */
  readonly generation: number;
  /**
   * No running job's liveness deadline is earlier than this (null: no job has one). A lower
   * bound, not the minimum: a heartbeat moves its job's deadline without writing the core, and
   * the alarm that finds nothing due reads the true minimum again (liveness.ts).
   */
  readonly livenessDueAt: number | null;
  readonly jobs: Readonly<Record<string, Job>>;
  readonly inbox: Readonly<Record<string, InboxItem>>;
  /** Loaded tombstones: handles whose job was purged after retention, with the purge time. */
  readonly purged: Readonly<Record<string, number>>;
  /**
   * Loaded run ids that finished in this lifetime, with the finish time: a run id is used once per
   * lifetime, so a replayed register of a finished run is refused (one row per finished run).
   */
  readonly finishedRuns: Readonly<Record<string, number>>;
}

/** What a session object keeps in memory between requests: the session without its rows. */
export type Core = Omit<Session, "messages" | "jobs" | "inbox" | "purged" | "finishedRuns">;

export type SessionStatus = "idle" | "running" | "suspended" | "resuming";

/** Whether a wake is still owed to the host: delivered or not, no run has taken it yet. */
export function isResumePending(resume: Resume | null): boolean {
  if (resume === null) return false;
  switch (resume.state) {
    case "scheduled":
    case "delivered":
    case "no_target":
      return true;
    case "completed":
    case "failed":
      return false;
    default:
      return assertNever(resume);
  }
}

export function sessionStatus(session: Core): SessionStatus {
  if (session.run !== null) return "running";
  if (session.wait !== null) return "suspended";
  if (isResumePending(session.resume)) return "resuming";
  return "idle";
}
