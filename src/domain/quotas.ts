// Per-tenant quotas: what one tenant may hold and keep open, with the deployment's defaults, and
// the refusal each quota answers (429 with Retry-After; 413 for full outputs). Counting what is
// held is left to the caller: the session object counts its jobs, bytes and long-polls; the
// Worker its tenant's.
import { type Failure, fail } from "./errors";

export interface Quotas {
  /** Sessions a tenant holds at once (created and not deleted). */
  readonly sessions: number;
  /** Jobs of one session without a result; a reservation past it waits for one to end. */
  readonly runningJobs: number;
  /** Bytes of one session's messages (the JSON of role, content and metadata, summed). */
  readonly messageBytes: number;
  /**
   * Bytes of full-output parts one session holds in R2: every part its jobs uploaded (a part sent
   * again counts again), until the job's purge or the session's delete.
   */
  readonly fullOutputBytes: number;
  /** Long-polls (`wait_ms` > 0) open on one session at once. */
  readonly longPollsPerSession: number;
  /** Long-polls open at once for one tenant in one Worker isolate (docs/design/tenants-and-quotas.md). */
  readonly longPollsPerTenant: number;
}

/** Quota names as settings spell them: TENANT_SETTINGS keys and the QUOTA_* variables. */
export const QUOTA_KEYS = {
  sessions: "sessions",
  runningJobs: "running_jobs",
  messageBytes: "message_bytes",
  fullOutputBytes: "full_output_bytes",
  longPollsPerSession: "long_polls_per_session",
  longPollsPerTenant: "long_polls_per_tenant",
} as const satisfies Record<keyof Quotas, string>;

/**
 * Far above what one agent session uses (a few running jobs, a few MiB of messages, full outputs
 * of a few MiB each), far below what broke the service (2,100 sessions in 47 s, 1,500 running
 * jobs, 10,000 long-polls, 192 MiB of parts in 8 s kept for a day). Four full outputs of the
 * largest size (MAX_FULL_OUTPUT_BYTES' default) fit in one session.
 */
export const DEFAULT_QUOTAS: Quotas = {
  sessions: 10_000,
  runningJobs: 128,
  messageBytes: 64 * 1024 * 1024,
  fullOutputBytes: 4 * 1024 * 1024 * 1024,
  longPollsPerSession: 8,
  longPollsPerTenant: 256,
};

/** Seconds a refused caller waits before trying again, by what it waits for. */
export const RETRY_AFTER_SECONDS = {
  /** A job's result or a delete frees room: a client that polls every few seconds sees it. */
  quota: 5,
  /** An open long-poll ends within its wait_ms (at most 30 s); most end sooner. */
  long_poll: 1,
  /** The rate-limiting binding counts over periods of 10 s. */
  rate: 10,
} as const;

export const sessionsRefusal = (quotas: Quotas): Failure =>
  fail(
    "quota_exceeded",
    `the tenant holds ${quotas.sessions} sessions, its quota (sessions): delete one first`,
  );

/** A new reservation past the running-jobs quota; a reservation made again is always answered. */
export function runningJobsRefusal(running: number, quotas: Quotas): Failure | null {
  return running < quotas.runningJobs
    ? null
    : fail(
        "quota_exceeded",
        `the session has ${running} running jobs, its quota (running_jobs): wait for a result`,
      );
}

export function messageBytesRefusal(
  stored: number,
  adding: number,
  quotas: Quotas,
): Failure | null {
  return stored + adding <= quotas.messageBytes
    ? null
    : fail(
        "quota_exceeded",
        `the session's messages hold ${stored} bytes; ${adding} more would pass its quota (message_bytes) of ${quotas.messageBytes}`,
      );
}

/**
 * A part that would take the session past its full-output bytes. 413, not 429: the room comes
 * back only with a purge or a delete, hours away, so the runner completes with the inline head
 * and tail instead of retrying (it retries a 429 and gives the full output up on a 413).
 */
export function fullOutputBytesRefusal(
  held: number,
  adding: number,
  quotas: Quotas,
): Failure | null {
  return held + adding <= quotas.fullOutputBytes
    ? null
    : fail(
        "payload_too_large",
        `the session's full outputs hold ${held} bytes; a part of ${adding} more would pass its quota (full_output_bytes) of ${quotas.fullOutputBytes}`,
      );
}

export function longPollRefusal(
  open: number,
  limit: number,
  scope: "session" | "tenant",
): Failure | null {
  return open < limit
    ? null
    : fail(
        "too_many_long_polls",
        `${open} long-polls are open on this ${scope}, its quota (long_polls_per_${scope}): poll with wait_ms=0 or retry`,
      );
}

/**
 * The quota settings of TENANT_SETTINGS and the QUOTA_* variables: positive integers, or null
 * for "no limit" (a deployment that trusts a tenant). Missing keys keep the fallback.
 */
export type QuotaOverrides = { readonly [Key in keyof Quotas]?: number | null };

const NO_LIMIT = Number.POSITIVE_INFINITY;

export function withOverrides(base: Quotas, overrides: QuotaOverrides | undefined): Quotas {
  if (overrides === undefined) return base;
  const next: Record<keyof Quotas, number> = { ...base };
  for (const key of Object.keys(QUOTA_KEYS) as (keyof Quotas)[]) {
    const value = overrides[key];
    if (value !== undefined) next[key] = value === null ? NO_LIMIT : value;
  }
  return next;
}
