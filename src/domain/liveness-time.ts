// Deadline arithmetic shared by reservations and heartbeats (no rule here: see liveness.ts).

/** A job's liveness deadline when it was last heard from at `at`; null without a timeout. */
export const deadlineFrom = (timeoutMs: number | null, at: number): number | null =>
  timeoutMs === null ? null : at + timeoutMs;

/** The earlier of two optional times. */
export const earliest = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.min(a, b);
