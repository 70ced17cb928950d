// The audit trail's events: what happened to a session, in the words operators read.
// Writing, paging and bounding them is left to the session object's audit store.

export type AuditEvent =
  | {
      readonly type: "completion";
      readonly handle: string;
      /** accepted, duplicate, or the refusal's code (result_conflict, lifetime_ended, …). */
      readonly outcome: string;
      readonly disposition: string | null;
      /** The lifetime the callback token named, when it was not this one. */
      readonly token_lifetime?: string;
      /** Set when the service gave the result itself: `heartbeat_timeout` (the runner fell silent). */
      readonly ended_by?: "heartbeat_timeout";
    }
  /** The agent asked the runner to end a job (an operator's is an `operator` event). */
  | { readonly type: "cancel"; readonly handle: string }
  | {
      readonly type: "delivery";
      readonly resume_id: string;
      readonly attempt: number;
      readonly status: number | null;
      readonly error: string | null;
      readonly duration_ms: number;
      /** The service binding woken, for a session with resume_binding (its status is null). */
      readonly binding?: string;
    }
  | { readonly type: "run_registered"; readonly run_id: string; readonly resume_id: string | null }
  | {
      readonly type: "run_suspended";
      readonly run_id: string;
      readonly waiting_for: readonly string[];
      readonly wake: string;
      /** null when the suspend woke at once (its results were already there). */
      readonly ceiling_at: string | null;
    }
  | { readonly type: "run_finished"; readonly run_id: string; readonly status: string }
  /** `ids` holds at most the first AUDIT_IDS_KEPT envelope ids; `count` is all of them. */
  | { readonly type: "claim"; readonly count: number; readonly ids: readonly string[] }
  | { readonly type: "ack"; readonly count: number; readonly ids: readonly string[] }
  | { readonly type: "ceiling"; readonly handles: readonly string[] }
  | {
      readonly type: "operator";
      readonly action: "redeliver" | "expire_wait" | "mark_lost" | "cancel";
      readonly handle?: string;
      readonly resume_id?: string;
    };

/** An event as stored and paged: its place in the trail and its time. */
export type StoredEvent = { readonly seq: number; readonly at: string } & AuditEvent;

/** Envelope ids a claim or ack event keeps: enough to follow one item, small at any claim size. */
const AUDIT_IDS_KEPT = 16;

export const idsEvent = (type: "claim" | "ack", ids: readonly string[]): AuditEvent => ({
  type,
  count: ids.length,
  ids: ids.slice(0, AUDIT_IDS_KEPT),
});
