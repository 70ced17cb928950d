// The statuses of the cross-session index: what an operator filters on. The index entry decides a
// session's (index-entry.ts); the ops query validates a filter against them (schemas.ts).

/** What an operator filters on; `overdue` is the only one that time alone can bring about. */
export const ATTENTION_STATUSES = [
  "suspended",
  "resuming",
  "failed",
  "no_target",
  "overdue",
] as const;
export type AttentionStatus = (typeof ATTENTION_STATUSES)[number];
/** The statuses a commit decides; `overdue` is read at query time from `overdueAt`. */
export type StoredAttention = Exclude<AttentionStatus, "overdue">;
