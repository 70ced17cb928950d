// Route table, operators: one session's view, audit trail and jobs, the mending actions, and the
// attention list (GET /v1/ops/sessions).
import { createRoute } from "@hono/zod-openapi";
import { eventsQuery, jobsQuery, noFieldsBody, opsSessionsQuery } from "../../domain/schemas";
import { attentionListSchema, eventsPageSchema, redeliveredSchema } from "../schemas/ops";
import { AUTHENTICATED, EVERY_ROUTE, problems, WITH_BODY } from "../schemas/problem";
import {
  cancelRequestedSchema,
  completionReplySchema,
  jobSchema,
  jobsPageSchema,
  sessionViewSchema,
} from "../schemas/views";
import { json, OPERATOR, opsJobParams, opsParams } from "./common";

const tags = ["Operators"];
const SESSION = "/v1/ops/sessions/{tenant}/{sid}";

export const opsListSessions = createRoute({
  method: "get",
  path: "/v1/ops/sessions",
  operationId: "opsListSessions",
  tags,
  summary: "Sessions that need attention, with counts per status",
  description:
    "Keyset pages from the D1 index (oldest `since` first; overdue: longest overdue first); follow `next` as `cursor`.",
  security: OPERATOR,
  request: { query: opsSessionsQuery },
  responses: {
    200: { description: "A page", ...json(attentionListSchema) },
    ...problems(...EVERY_ROUTE, "unauthorized", "invalid_request"),
  },
});

export const opsGetSession = createRoute({
  method: "get",
  path: SESSION,
  operationId: "opsGetSession",
  tags,
  summary: "One session's view",
  security: OPERATOR,
  request: { params: opsParams },
  responses: {
    200: { description: "The session view", ...json(sessionViewSchema) },
    ...problems(...AUTHENTICATED),
  },
});

export const opsDeleteSession = createRoute({
  method: "delete",
  path: SESSION,
  operationId: "opsDeleteSession",
  tags,
  summary: "Delete the session",
  security: OPERATOR,
  request: { params: opsParams },
  responses: { 204: { description: "Deleted" }, ...problems(...AUTHENTICATED) },
});

export const opsListEvents = createRoute({
  method: "get",
  path: `${SESSION}/events`,
  operationId: "opsListEvents",
  tags,
  summary: "The audit trail, oldest first",
  security: OPERATOR,
  request: { params: opsParams, query: eventsQuery },
  responses: {
    200: { description: "A page of events", ...json(eventsPageSchema) },
    ...problems(...AUTHENTICATED, "invalid_request"),
  },
});

export const opsListJobs = createRoute({
  method: "get",
  path: `${SESSION}/exec-jobs`,
  operationId: "opsListJobs",
  tags,
  summary: "Job summaries",
  security: OPERATOR,
  request: { params: opsParams, query: jobsQuery },
  responses: {
    200: { description: "A page", ...json(jobsPageSchema) },
    ...problems(...AUTHENTICATED, "invalid_request"),
  },
});

export const opsGetJob = createRoute({
  method: "get",
  path: `${SESSION}/exec-jobs/{handle}`,
  operationId: "opsGetJob",
  tags,
  summary: "One job with its output",
  security: OPERATOR,
  request: { params: opsJobParams },
  responses: {
    200: { description: "The job", ...json(jobSchema) },
    ...problems(...AUTHENTICATED, "job_expired"),
  },
});

export const opsRedeliver = createRoute({
  method: "post",
  path: `${SESSION}/redeliver`,
  operationId: "opsRedeliver",
  tags,
  summary: "Redeliver a failed resume (a new resume_id)",
  security: OPERATOR,
  request: { params: opsParams, body: { required: false, ...json(noFieldsBody) } },
  responses: {
    200: { description: "The new resume", ...json(redeliveredSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, "invalid_transition"),
  },
});

export const opsExpireWait = createRoute({
  method: "post",
  path: `${SESSION}/expire-wait`,
  operationId: "opsExpireWait",
  tags,
  summary: "Expire the armed wait now, as its ceiling would",
  security: OPERATOR,
  request: { params: opsParams, body: { required: false, ...json(noFieldsBody) } },
  responses: {
    200: { description: "The session view", ...json(sessionViewSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, "invalid_transition", "inbox_full"),
  },
});

export const opsMarkLost = createRoute({
  method: "post",
  path: `${SESSION}/exec-jobs/{handle}/mark-lost`,
  operationId: "opsMarkLost",
  tags,
  summary: "Give a running job the result lost (ended_by operator)",
  security: OPERATOR,
  request: { params: opsJobParams, body: { required: false, ...json(noFieldsBody) } },
  responses: {
    200: { description: "The completion's outcome", ...json(completionReplySchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, "invalid_transition", "inbox_full"),
  },
});

export const opsCancelJob = createRoute({
  method: "post",
  path: `${SESSION}/exec-jobs/{handle}/cancel`,
  operationId: "opsCancelJob",
  tags,
  summary: "Ask the runner to end a running job (its next heartbeat carries it)",
  security: OPERATOR,
  request: { params: opsJobParams, body: { required: false, ...json(noFieldsBody) } },
  responses: {
    202: { description: "Requested", ...json(cancelRequestedSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, "invalid_transition", "job_expired"),
  },
});
