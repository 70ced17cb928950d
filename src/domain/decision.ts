// The shape every domain rule has: the rows it reads (`needs`), and a decision that returns the
// next state, the row writes that make it durable, effects for the shell, and the reply.
// Loading rows, applying writes and performing effects are left to the Durable Object shell.
import type { AuditEvent } from "./audit";
import type { Failure } from "./errors";
import type { Quotas } from "./quotas";
import type { Core, InboxItem, Job, Message, ResumeReason, Session } from "./state";

export type { Core } from "./state";

export interface Ctx {
  readonly now: number;
  /**
   * A resume POST of this session is on the wire: no other attempt starts until it ended (one
   * webhook in flight per session, in the order the wakes happened). Absent means none.
   */
  readonly postOnWire?: boolean;
  /**
   * When the service last started taking requests (the isolate's first event): a runner silent
   * since before it may have been refused by the downtime (liveness.ts). Absent: long ago.
   */
  readonly serviceUpSince?: number;
  readonly config: {
    readonly waitCeilingMs: number;
    readonly jobRetentionMs: number;
    readonly resumeMaxAttempts: number;
    readonly resumeClaimTimeoutMs: number;
    readonly resumeWebhookUrl: string | null;
    /** Checked again at every attempt: removing an origin stops deliveries to it. */
    readonly resumeUrlAllowlist: readonly string[];
    /** Checked again at every attempt too: removing a binding stops deliveries through it. */
    readonly resumeBindingAllowlist: readonly string[];
    /** Settings HTTP refuses to serve must not steer deliveries either: no attempt starts. */
    readonly deliveriesPaused?: boolean;
    /** The session's tenant's quotas; absent (a domain test): none is checked. */
    readonly quotas?: Quotas;
  };
}

export interface ResumePayload {
  readonly type: "session.resume";
  readonly tenant: string;
  readonly session_id: string;
  readonly lifetime: string;
  readonly resume_id: string;
  readonly reason: ResumeReason;
  readonly inbox: { readonly pending: number };
}

export type Effect =
  | {
      readonly type: "deliver_resume";
      readonly url: string;
      readonly payload: ResumePayload;
      readonly attempt: number;
    }
  /** The same payload, through the service binding's `wake(resume)` instead of a signed POST. */
  | {
      readonly type: "wake_binding";
      readonly binding: string;
      readonly payload: ResumePayload;
      readonly attempt: number;
    };

/**
 * The row writes a decision makes, a closed union: the store applies each in the decision's one
 * transaction, beside the core's own row. A decision writes only rows it was given or creates.
 */
export type Write =
  | { readonly type: "insert_message"; readonly message: Message }
  | { readonly type: "insert_job"; readonly job: Job }
  /** A retired secret signed the job's token: the one it hands out now replaces it. */
  | { readonly type: "replace_job_token"; readonly handle: string; readonly callbackToken: string }
  /** The job's first result; storage keeps the first one even if two raced. */
  | { readonly type: "complete_job"; readonly job: Extract<Job, { completedAt: number }> }
  | { readonly type: "insert_envelope"; readonly item: InboxItem }
  | {
      readonly type: "mark_claimed";
      readonly ids: readonly string[];
      readonly leaseExpiresAt: number;
    }
  | { readonly type: "mark_acked"; readonly ids: readonly string[]; readonly ackedAt: number }
  /** A running job's liveness moved (a heartbeat, a grace, a cancel request): one row. */
  | { readonly type: "update_liveness"; readonly job: Extract<Job, { result: null }> }
  /** A running job takes `bytes` more of full-output parts (full-output.ts): its tally moves. */
  | { readonly type: "add_uploaded_bytes"; readonly handle: string; readonly bytes: number }
  /** A run finished: its id is kept for the rest of the lifetime, so it never registers again. */
  | { readonly type: "insert_finished_run"; readonly runId: string; readonly finishedAt: number }
  /** Retention over every row, loaded or not: jobs and acks at or before `horizon` go. */
  | { readonly type: "purge_before"; readonly horizon: number; readonly now: number }
  /**
   * Bounds the audit trail (the alarm's, not a rule's): deletes, oldest first, at most `max`
   * events that expired (`at` ≤ `expiredBy`) or fell out of their kind's newest (`kind_seq` ≤
   * `noiseUpTo` or `recordsUpTo`), never the newest event (`newestSeq`), which the numbering goes
   * on from.
   */
  | {
      readonly type: "trim_audit";
      readonly expiredBy: number;
      readonly noiseUpTo: number;
      readonly recordsUpTo: number;
      readonly newestSeq: number;
      readonly max: number;
    };

export type Decision<T> =
  | {
      readonly ok: true;
      readonly state: Session | null;
      readonly value: T;
      readonly effects: readonly Effect[];
      readonly writes: readonly Write[];
    }
  | Failure;

export const decided = <T>(
  state: Session | null,
  value: T,
  effects: readonly Effect[] = [],
  writes: readonly Write[] = [],
): Decision<T> => ({ ok: true, state, value, effects, writes });

/**
 * The rows a rule reads on top of the core. The shell loads exactly these; a rule that reads a
 * row it did not ask for throws (see `fence`), so a rule handed too few rows fails its tests.
 */
export interface Needs {
  /** Jobs by handle, with their outputs only when the rule reads them. */
  readonly jobs?: { readonly handles: readonly string[]; readonly output: boolean };
  /** Tombstones of purged handles. */
  readonly tombstones?: readonly string[];
  /** Run ids, to tell which of them finished in this lifetime. */
  readonly finishedRuns?: readonly string[];
  /** The first claimable items by generation, at most `max`, within `maxBytes` past the first. */
  readonly claimable?: { readonly max: number; readonly maxBytes: number };
  /** Inbox items by id, without their envelopes (an ack never reads one). */
  readonly items?: readonly string[];
  /** The count of items claimable at `now`. */
  readonly pending?: boolean;
  /** Running jobs whose liveness deadline passed at `now`, at most `max` (loaded into `jobs`). */
  readonly overdue?: { readonly max: number };
}

/** What `needs.overdue` found: the overdue handles (loaded), and the next deadline after them. */
export interface Overdue {
  readonly handles: readonly string[];
  /** More were overdue than `max`: the timers run again at once. */
  readonly more: boolean;
  /** The earliest deadline of a running job that is not yet overdue. */
  readonly nextDeadline: number | null;
}

export interface Loaded {
  /** The core with the rows `needs` named (and only those). */
  readonly session: Session;
  /** Claimable items at `now`; throws unless the rule's needs asked for it. */
  readonly pending: () => number;
  /** The earliest completion, ack or purge time over every row (the retention timer). */
  readonly retainedSince: number | null;
  /** Overdue jobs; null unless the rule's needs asked for them. */
  readonly overdue: Overdue | null;
}

/** One command of a session: the rows it reads, how it decides, and what the audit trail records. */
export interface Rule<Cmd, T> {
  readonly needs: (core: Core, cmd: Cmd, now: number) => Needs;
  /** With no session: what the command gets (default: not found). */
  readonly absent?: (cmd: Cmd, ctx: Ctx) => Decision<T>;
  readonly decide: (loaded: Loaded, cmd: Cmd, ctx: Ctx) => Decision<T>;
  /** Events recorded in the decision's own transaction. */
  readonly events?: (cmd: Cmd, value: T, state: Session, before: Session) => readonly AuditEvent[];
  /** An event for a refusal, recorded on its own (a refusal changes nothing else). */
  readonly refused?: (cmd: Cmd, code: string, before: Core) => AuditEvent | null;
}

/** Needs nothing beyond the core. */
export const coreOnly = (): Needs => ({});
