// Zod schemas of the operator answers (docs/api.md "Operators"): the audit trail and the
// attention list.
// The session objects and the D1 index produce these values; the route table documents them.
import { z } from "zod";
import { ATTENTION_STATUSES } from "../../domain/attention-status";
import { RESUME_STATE, SESSION_STATUS } from "./views";

const count = z.int().min(0);
// Readonly: the audit events are immutable records in the domain.
const ids = z.array(z.string()).readonly();
const at = { seq: count, at: z.string() };

const auditEventSchema = z
  .discriminatedUnion("type", [
    z.strictObject({
      ...at,
      type: z.literal("completion"),
      handle: z.string(),
      outcome: z.string().meta({ description: "accepted, duplicate, or the refusal's code" }),
      disposition: z.string().nullable(),
      token_lifetime: z.string().optional(),
      ended_by: z.literal("heartbeat_timeout").optional(),
    }),
    z.strictObject({ ...at, type: z.literal("cancel"), handle: z.string() }),
    z.strictObject({
      ...at,
      type: z.literal("delivery"),
      resume_id: z.string(),
      attempt: count,
      status: z.int().nullable(),
      error: z.string().nullable(),
      duration_ms: count,
      binding: z
        .string()
        .optional()
        .meta({ description: "The service binding woken (resume_binding); absent for a webhook" }),
    }),
    z.strictObject({
      ...at,
      type: z.literal("run_registered"),
      run_id: z.string(),
      resume_id: z.string().nullable(),
    }),
    z.strictObject({
      ...at,
      type: z.literal("run_suspended"),
      run_id: z.string(),
      waiting_for: ids,
      wake: z.string(),
      ceiling_at: z.string().nullable(),
    }),
    z.strictObject({
      ...at,
      type: z.literal("run_finished"),
      run_id: z.string(),
      status: z.string(),
    }),
    z.strictObject({ ...at, type: z.literal("claim"), count, ids }),
    z.strictObject({ ...at, type: z.literal("ack"), count, ids }),
    z.strictObject({ ...at, type: z.literal("ceiling"), handles: ids }),
    z.strictObject({
      ...at,
      type: z.literal("operator"),
      action: z.enum(["redeliver", "expire_wait", "mark_lost", "cancel"]),
      handle: z.string().optional(),
      resume_id: z.string().optional(),
    }),
  ])
  .meta({ id: "AuditEvent" });

export const eventsPageSchema = z.strictObject({
  events: z.array(auditEventSchema),
  next_after: count.nullable(),
});

export const redeliveredSchema = z.strictObject({ resume_id: z.string() });

const listedSessionSchema = z
  .strictObject({
    tenant: z.string(),
    id: z.string(),
    status: z.enum(ATTENTION_STATUSES),
    session_status: SESSION_STATUS.nullable(),
    since: z.string().nullable(),
    ceiling_at: z.string().nullable(),
    overdue_at: z.string().nullable(),
    waiting_for: ids,
    resume: z
      .strictObject({
        resume_id: z.string(),
        state: RESUME_STATE,
        attempts: count,
        last_error: z.string().nullable(),
        next_attempt_at: z.string().nullable(),
      })
      .nullable(),
    inbox_pending: count,
    indexed_at: z.string(),
  })
  .meta({ id: "ListedSession", description: "A session that needs attention, from the index." });

export const attentionListSchema = z.strictObject({
  sessions: z.array(listedSessionSchema),
  next: z.string().nullable(),
  counts: z.strictObject({
    suspended: count,
    resuming: count,
    failed: count,
    no_target: count,
    overdue: count,
  }),
});
