// Zod schemas of the JSON the agent-facing routes answer (docs/api.md "The session view",
// "Messages", "Exec jobs", "Runs"): sessions, messages, jobs.
// The domain's view builders produce these shapes; the route table and the client type against them.
import { z } from "zod";
import { SERVICE_ENDED_BY } from "../../../shared/exec-wire";
import { ENDED_BY, JOB_STATUSES } from "../../domain/schemas";

const timestamp = z.string().meta({ description: "RFC 3339 time (UTC)", format: "date-time" });
const count = z.int().min(0);

export const RESUME_REASON = z.enum([
  "background_exec_completed",
  "background_exec_wait_expired",
  "background_exec_outcome_unknown",
  "inbox_pending",
]);
export const RESUME_STATE = z.enum(["scheduled", "delivered", "no_target", "completed", "failed"]);
export const SESSION_STATUS = z.enum(["idle", "running", "suspended", "resuming"]);

export const sessionViewSchema = z
  .strictObject({
    id: z.string(),
    tenant: z.string(),
    lifetime: z.string(),
    created_at: timestamp,
    status: SESSION_STATUS,
    run: z
      .strictObject({
        run_id: z.string(),
        resume_id: z.string().nullable(),
        registered_at: timestamp,
      })
      .nullable(),
    waiting_for_bash: z
      .strictObject({
        handles: z.array(z.string()),
        wake: z.enum(["all", "any"]),
        since: timestamp,
        ceiling_at: timestamp,
      })
      .nullable(),
    suspension: z
      .strictObject({
        reason: z.literal("waiting_for_bash"),
        suspended_at: timestamp,
        resumable: z.boolean(),
      })
      .nullable(),
    metadata: z.record(z.string(), z.unknown()),
    message_count: count,
    inbox: z.strictObject({ pending: count, claimed: count, generation: count }),
    resume: z
      .strictObject({
        resume_id: z.string(),
        reason: RESUME_REASON,
        state: RESUME_STATE,
        attempts: count,
        created_at: timestamp,
        next_attempt_at: timestamp.nullable(),
        delivered_at: timestamp.nullable(),
        last_error: z.string().nullable(),
        ended_at: timestamp.nullable(),
      })
      .nullable(),
    jobs: z.strictObject({ running: count, done: count }),
    notify_seq: count,
    resume_url: z.string().nullable(),
    resume_binding: z
      .string()
      .nullable()
      .meta({ description: "The service binding this session is woken through; null: a webhook" }),
    wake: z
      .strictObject({
        via: z.enum(["webhook", "binding"]).nullable().meta({
          description:
            "How a result that should wake this session would reach its agent now: its `resume_url` or its tenant's default webhook (`webhook`), its `resume_binding` (`binding`), or nothing (null: no target, a binding the deployment does not bind or allow, a `resume_url` whose origin left the allowlist).",
        }),
      })
      .meta({ description: "The session's wake path under the deployment's settings now." }),
    runner: z
      .strictObject({ url: z.string() })
      .nullable()
      .meta({ description: "The runner the session names (its token is write-only); null: none" }),
  })
  .meta({ id: "Session", description: "The session view: small at any history (no messages)." });

const messageSchema = z
  .strictObject({
    index: count,
    role: z.enum(["user", "assistant", "system", "tool"]),
    content: z.unknown(),
    metadata: z.record(z.string(), z.unknown()),
    created_at: timestamp,
  })
  .meta({ id: "Message" });

export const messagesPageSchema = z.strictObject({
  messages: z.array(messageSchema),
  next_after: count.nullable(),
});

export const messageIndexSchema = z.strictObject({ index: count });

const jobFields = {
  handle: z.string(),
  command: z.string(),
  lifetime: z.string(),
  status: z.enum(JOB_STATUSES),
  exit_code: z.int().nullable(),
  output_truncated: z.boolean(),
  output_bytes_total: count,
  output_bytes_total_known: z.boolean().meta({
    description:
      "False when the runner sent no output_bytes_total for a cut output: output_bytes_total is then only the cut output's own size, not what the command wrote.",
  }),
  ended_by: z.enum([...ENDED_BY, ...SERVICE_ENDED_BY]).nullable(),
  reserved_at: timestamp,
  completed_at: timestamp.nullable(),
  heartbeat_timeout_ms: z.int().nullable(),
  last_heartbeat_at: timestamp.nullable(),
  progress: z
    .strictObject({
      output_tail: z.string(),
      output_bytes_total: count.nullable(),
      at: timestamp,
    })
    .nullable()
    .meta({
      description: "The last heartbeat's progress while the job runs; null once it has a result.",
    }),
  cancel_requested: z.boolean(),
  full_output: z.strictObject({ bytes: count, sha256: z.string() }).nullable().meta({
    description:
      "The whole output the runner uploaded beside the result, read by range at `…/output`; null when none.",
  }),
};

export const jobSchema = z
  .strictObject({ ...jobFields, output: z.string() })
  .meta({ id: "Job", description: "One exec job with its output (the write_stdin pull)." });

const jobSummarySchema = z
  .strictObject(jobFields)
  .meta({ id: "JobSummary", description: "A job without its output." });

export const jobsPageSchema = z.strictObject({
  jobs: z.array(jobSummarySchema),
  next: count.nullable(),
});

const callbackSchema = z
  .strictObject({
    url: z.string(),
    token: z.string(),
    heartbeat_url: z.string(),
    heartbeat_timeout_ms: z.int().nullable(),
  })
  .meta({ id: "Callback", description: "Where and with which bearer token the runner reports." });

export const reservationSchema = z.strictObject({
  job: jobSchema,
  callback: callbackSchema,
  will_wake: z.boolean().meta({
    description:
      "True exactly when the session's `wake.via` is not null: a result of this job that should wake the session can reach its agent. False: nothing will wake it; the agent checks with the pull.",
  }),
});

export const runRegisteredSchema = z.strictObject({ run_id: z.string(), notify_seq: count });

export const notificationsSchema = z.strictObject({ notify_seq: count, pending: count });

export const completionAcceptedSchema = z
  .strictObject({
    outcome: z.literal("accepted"),
    generation: count,
    disposition: z.enum([
      "resume_scheduled",
      "active_run_notified",
      "staged",
      "queued",
      "observed",
    ]),
  })
  .meta({ id: "CompletionAccepted" });

export const completionDuplicateSchema = z
  .strictObject({ outcome: z.literal("duplicate"), generation: count })
  .meta({ id: "CompletionDuplicate", description: "The same result again: nothing changed." });

export const completionReplySchema = z
  .discriminatedUnion("outcome", [completionAcceptedSchema, completionDuplicateSchema])
  .meta({ id: "CompletionReply" });

export const statsSchema = z.strictObject({
  rows_read: count,
  rows_written: count,
  database_bytes: count,
  alarms: count,
  index_rows_written: count,
  sql_statements: count.meta({
    description:
      "Distinct SQL strings this object has run since it started: each stays prepared (holding SQLite heap) for the object's life",
  }),
});

export const healthSchema = z.strictObject({ ok: z.literal(true), version: z.string() });
export const objectHealthSchema = z.strictObject({ ok: z.literal(true) });

export const frontDoorSchema = z
  .strictObject({
    service: z.literal("exec-inbox"),
    version: z.string(),
    health: z.strictObject({
      worker: z.literal("ok"),
      durable_object: z
        .enum(["ok", "failing"])
        .meta({ description: "Whether one no-op Durable Object call answered" }),
    }),
    links: z.strictObject({
      console: z.literal("/console"),
      docs: z.literal("/docs"),
      openapi: z.literal("/openapi.json"),
      health: z.literal("/healthz"),
    }),
  })
  .meta({ id: "FrontDoor" });

export const cancelRequestedSchema = z.strictObject({ cancel_requested: z.literal(true) });
