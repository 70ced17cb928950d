// Zod schemas of every request body and query of the HTTP API; wire types are derived from them.
// The HTTP layer validates with these and the OpenAPI document is generated from them.
import { z } from "zod";
import {
  completionBody,
  ENDED_BY,
  heartbeatBody,
  heartbeatTimeoutMs,
  MAX_COMMAND_BYTES,
  type TERMINAL_STATUSES,
} from "../../shared/exec-wire";
import { ATTENTION_STATUSES } from "./attention-status";
import { TENANT_PATTERN } from "./tenants";

// `.` and `..` fit the charset but are dot segments: a URL parser removes them from a path, so no
// client could reach /v1/sessions/../… nor a runner the callback URL of a handle `..`.
export const ID_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,128}$/;
export const idSchema = z
  .string()
  .regex(ID_PATTERN, "1-128 characters of [A-Za-z0-9._:-], not . or .. (a URL cannot carry them)");

const metadataSchema = z.record(z.string(), z.unknown());

/**
 * A session's runner: its base URL (checked against the runner allowlist by the handler, 422
 * invalid_request, as resume_url is) and the bearer token the service sends it, write-only. The
 * token is sent in a header, so it is printable ASCII without spaces.
 */
export const runnerBody = z.strictObject({
  url: z.string().max(2048),
  token: z
    .string()
    .min(1)
    .max(4096)
    .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces (it goes in an Authorization header)"),
});

/** `PUT …/runner`: a runner replaces the session's, `null` removes it. */
export const setRunnerBody = runnerBody.nullable();

export const createSessionBody = z.strictObject({
  id: idSchema,
  resume_url: z.string().max(2048).optional(),
  // Checked against the binding allowlist by the handler (422 invalid_request), as resume_url is.
  resume_binding: z.string().max(64).optional(),
  metadata: metadataSchema.optional(),
  runner: runnerBody.optional(),
});

export const appendMessageBody = z.strictObject({
  role: z.enum(["user", "assistant", "system", "tool"]),
  content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
  metadata: metadataSchema.optional(),
});

export const registerRunBody = z.strictObject({
  run_id: idSchema.optional(),
  resume_id: z.string().min(1).max(128).optional(),
});

export const finishRunBody = z.strictObject({});

/** The body of an action that takes none (cancel, redeliver, expire-wait, mark-lost): optional, and empty. */
export const noFieldsBody = z.strictObject({});

export const suspendBody = z.strictObject({
  waiting_for: z.array(idSchema).min(1).max(64),
  wake: z.enum(["all", "any"]).default("all"),
  ceiling_ms: z.int().min(1000).max(604_800_000).optional(),
});

export const reserveJobBody = z.strictObject({
  handle: idSchema,
  // null: no liveness check for this job, whatever the deployment's default.
  heartbeat_timeout_ms: heartbeatTimeoutMs.nullable().optional(),
  command: z
    .string()
    .min(1)
    .refine((command) => new TextEncoder().encode(command).byteLength <= MAX_COMMAND_BYTES, {
      message: "command is longer than 8 KiB",
    }),
});

export { completionBody, ENDED_BY, heartbeatBody, MAX_COMMAND_BYTES };

export const JOB_STATUSES = ["running", "completed", "failed", "killed", "lost"] as const;

export const claimBody = z.strictObject({
  max: z.int().min(1).max(128).default(16),
  lease_ms: z.int().min(1000).max(3_600_000).default(300_000),
});

export const ackBody = z.strictObject({
  ids: z.array(z.string().min(1).max(256)).min(1).max(1024),
});

/**
 * A query integer: the string is read as `Number` reads it (what `z.coerce` did), but nothing
 * else is coerced, so `null` is not a value the document can claim (a query has only strings).
 */
const queryInt = (int: z.ZodInt) =>
  z.preprocess((value) => (typeof value === "string" ? Number(value) : value), int);
const pageLimit = z.coerce.number().int().min(1).max(500).default(100);
const index = queryInt(z.int().min(0).max(Number.MAX_SAFE_INTEGER));

export const messagesQuery = z.strictObject({
  after: index.optional(),
  before: index.optional(),
  limit: pageLimit,
});

export const jobsQuery = z.strictObject({
  status: z.enum(["running", "done"]).optional(),
  after: index.default(0),
  limit: pageLimit,
});

export const eventsQuery = z.strictObject({
  after: index.default(0),
  limit: pageLimit,
});

export const notificationsQuery = z.strictObject({
  after: queryInt(z.int().min(0)).default(0),
  wait_ms: queryInt(z.int().min(0).max(30_000)).default(0),
});

export type CompletionBody = z.infer<typeof completionBody>;
export type JobStatus = (typeof JOB_STATUSES)[number];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export type EndedBy = (typeof ENDED_BY)[number];

/** An empty query value (`?tenant=` from a blank filter) means the filter is not set. */
const unsetIfEmpty = (value: unknown): unknown => (value === "" ? undefined : value);

export const opsSessionsQuery = z.strictObject({
  status: z.preprocess(unsetIfEmpty, z.enum(ATTENTION_STATUSES).optional()),
  tenant: z.preprocess(
    unsetIfEmpty,
    z.string().regex(TENANT_PATTERN, "1-64 characters of [a-z0-9-]").optional(),
  ),
  limit: pageLimit,
  cursor: z.preprocess(unsetIfEmpty, z.string().max(2048).optional()),
});
