// A session's entry in the cross-session index of sessions that need attention, as
// a pure function of its core. Storing entries (D1) and sending them after commits is left to the shell.
import { assertNever } from "./assert-never";
import type { AttentionStatus, StoredAttention } from "./attention-status";
import type { Config } from "./config";
import type { Core, ResumeState, SessionStatus } from "./state";
import { resumeNextAttemptAt, sessionStatus } from "./state";

/** The listed part of an entry (stored as JSON in the index row; new fields must stay optional). */
export interface IndexDetail {
  readonly session_status: SessionStatus;
  readonly ceiling_at: number | null;
  readonly waiting_for: readonly string[];
  readonly resume: {
    readonly resume_id: string;
    readonly state: ResumeState;
    readonly attempts: number;
    readonly last_error: string | null;
    readonly next_attempt_at: number | null;
  } | null;
  readonly inbox_pending: number;
}

export interface IndexEntry {
  readonly tenant: string;
  readonly id: string;
  /** Null: the session needs no attention (idle without a failed resume, or running). */
  readonly attention: StoredAttention | null;
  /** When the session entered that status (wait armed, resume created, resume failed). */
  readonly since: number | null;
  /** When it becomes overdue if nothing changes: the wait's ceiling, or a delivered resume's claim timeout. */
  readonly overdueAt: number | null;
  /** Null when `attention` is null: nothing of a quiet session is listed, so nothing is sent for it. */
  readonly detail: IndexDetail | null;
  /**
   * A wake whose entry may wait out the settle window (`sendableAt`): one a finished command
   * caused. An expired wait's is not held: an operator's expire-wait is listed at once, and a
   * ceiling firing is rare enough to pay its own write.
   */
  readonly settles?: true;
}

/**
 * The entry of a session; `pendingInbox` counts the claimable inbox items (read in SQL by the shell).
 * `overdue` covers a wait whose ceiling passed and a delivered resume no run took within
 * RESUME_CLAIM_TIMEOUT_MS: both mean the session's own alarm is late, or the agent host is.
 */
export function indexEntryOf(
  session: Core,
  pendingInbox: number,
  config: Pick<Config, "resumeClaimTimeoutMs">,
): IndexEntry {
  const status = sessionStatus(session);
  const { wait, resume } = session;
  const quiet: IndexEntry = {
    tenant: session.tenant,
    id: session.id,
    attention: null,
    since: null,
    overdueAt: null,
    detail: null,
  };
  let attention: StoredAttention | null = null;
  let since: number | null = null;
  let overdueAt: number | null = null;
  if (status === "suspended" && wait !== null) {
    attention = "suspended";
    since = wait.since;
    overdueAt = wait.ceilingAt;
  } else if ((status === "resuming" || status === "idle") && resume !== null) {
    // A pending resume makes the session "resuming"; only an ended one can be seen while idle.
    switch (resume.state) {
      case "scheduled":
        attention = "resuming";
        since = resume.createdAt;
        break;
      case "delivered":
        attention = "resuming";
        since = resume.createdAt;
        overdueAt = resume.deliveredAt + config.resumeClaimTimeoutMs;
        break;
      case "no_target":
        attention = "no_target";
        since = resume.createdAt;
        break;
      case "failed":
        attention = "failed";
        since = resume.endedAt;
        break;
      case "completed":
        break;
      default:
        assertNever(resume);
    }
  }
  if (attention === null) return quiet;
  return {
    ...quiet,
    attention,
    since,
    overdueAt,
    ...(attention === "resuming" && resume?.reason !== "background_exec_wait_expired"
      ? { settles: true as const }
      : {}),
    detail: {
      session_status: status,
      ceiling_at: wait?.ceilingAt ?? null,
      waiting_for: wait === null ? [] : [...wait.handles],
      resume:
        resume === null
          ? null
          : {
              resume_id: resume.resumeId,
              state: resume.state,
              attempts: resume.attempts,
              last_error: resume.lastError,
              next_attempt_at: resumeNextAttemptAt(resume),
            },
      inbox_pending: pendingInbox,
    },
  };
}

/** The status an entry is listed under at `now`: overdue wins over the status it is late in. */
export function attentionAt(entry: IndexEntry, now: number): AttentionStatus | null {
  if (entry.attention === null) return null;
  return entry.overdueAt !== null && entry.overdueAt <= now ? "overdue" : entry.attention;
}

/**
 * How long the entry of a session that was just woken waits before it goes out (docs/design/index.md):
 * the run that usually registers within a second or two of the webhook makes the session quiet
 * again, and suspended → quiet then goes out as one write instead of two (suspended → resuming →
 * quiet), each of which moves the row in all four partial indexes.
 */
export const WAKE_SETTLE_MS = 5_000;

/**
 * When `entry` may be sent, given what the index was last sent; null: now. Only an entry that
 * moves into `resuming` waits, until its resume is `settleMs` old, so a `resuming` (and, later,
 * `overdue`) listing is late by at most `settleMs`; `failed`, `no_target` and every other change
 * go out at once, and a resume already listed as `resuming` (or redelivered after a `failed` or
 * `no_target` one) updates at once.
 */
export function sendableAt(
  entry: IndexEntry,
  lastSent: IndexEntry | null,
  settleMs: number,
): number | null {
  if (entry.attention !== "resuming" || entry.since === null || entry.settles !== true) return null;
  // Listed as resuming already, or as a resume that ended (an operator's redeliver of a failed or
  // unreachable one): the list must not go on offering what was just done.
  if (
    lastSent?.attention === "resuming" ||
    lastSent?.attention === "failed" ||
    lastSent?.attention === "no_target"
  )
    return null;
  return entry.since + settleMs;
}

/** Two entries list the same way: nothing needs sending. */
export const sameEntry = (a: IndexEntry | null, b: IndexEntry | null): boolean =>
  a !== null && b !== null && JSON.stringify(a) === JSON.stringify(b);
