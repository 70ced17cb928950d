// Route table, exec jobs: reservation, list, the write_stdin pull, and the runner's completion.
import { createRoute } from "@hono/zod-openapi";
import { heartbeatReply } from "../../../shared/exec-wire";
import {
  completionBody,
  heartbeatBody,
  jobsQuery,
  noFieldsBody,
  reserveJobBody,
} from "../../domain/schemas";
import { AUTHENTICATED, EVERY_ROUTE, LIMITED, problems, WITH_BODY } from "../schemas/problem";
import {
  cancelRequestedSchema,
  completionAcceptedSchema,
  completionDuplicateSchema,
  jobSchema,
  jobsPageSchema,
  reservationSchema,
} from "../schemas/views";
import { AGENT, CALLBACK, jobParams, json, sessionParams } from "./common";

const tags = ["Exec jobs"];

export const reserveJob = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/exec-jobs",
  operationId: "reserveJob",
  tags,
  summary: "Reserve a job and get its callback",
  description:
    "Same handle and command again answers 200 with the same job and the identical callback token. `heartbeat_timeout_ms` (5,000–86,400,000) asks for liveness: silence past it makes the job `lost` (`ended_by: heartbeat_timeout`); without it the deployment's `HEARTBEAT_TIMEOUT_MS` applies, and none when that is unset.",
  security: AGENT,
  request: { params: sessionParams, body: { required: true, ...json(reserveJobBody) } },
  responses: {
    201: { description: "Reserved", ...json(reservationSchema) },
    200: { description: "Already reserved for this command", ...json(reservationSchema) },
    ...problems(
      ...AUTHENTICATED,
      ...WITH_BODY,
      "job_conflict",
      "job_expired",
      "quota_exceeded",
      ...LIMITED,
    ),
  },
});

export const listJobs = createRoute({
  method: "get",
  path: "/v1/sessions/{sid}/exec-jobs",
  operationId: "listJobs",
  tags,
  summary: "A page of job summaries (no outputs), in reservation order",
  security: AGENT,
  request: { params: sessionParams, query: jobsQuery },
  responses: {
    200: { description: "A page; pass `next` back as `after`", ...json(jobsPageSchema) },
    ...problems(...AUTHENTICATED, "invalid_request", ...LIMITED),
  },
});

export const getJob = createRoute({
  method: "get",
  path: "/v1/sessions/{sid}/exec-jobs/{handle}",
  operationId: "getJob",
  tags,
  summary: "Pull a job with its output (write_stdin)",
  description: "A terminal result stays pullable until `JOB_RETENTION_MS` after completion.",
  security: AGENT,
  request: { params: jobParams },
  responses: {
    200: { description: "The job", ...json(jobSchema) },
    ...problems(...AUTHENTICATED, "job_expired"),
  },
});

export const postCompletion = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/exec-jobs/{handle}/completion",
  operationId: "postCompletion",
  tags,
  summary: "Report a job's terminal result (runner, callback token)",
  description:
    "The callback token decides the tenant, lifetime and job. 202 accepted, 200 duplicate; a refusal tells the runner to stop (409, 410) or retry (429, 5xx). `full_output` names a whole output uploaded first in parts (`…/output/parts/{index}`): parts missing or of another size → 409 `output_incomplete`, each named in `errors`, nothing changed.",
  security: CALLBACK,
  request: { params: jobParams, body: { required: true, ...json(completionBody) } },
  responses: {
    202: { description: "Accepted", ...json(completionAcceptedSchema) },
    200: {
      description: "The same result again: nothing changed",
      ...json(completionDuplicateSchema),
    },
    ...problems(
      ...EVERY_ROUTE,
      ...WITH_BODY,
      "unauthorized",
      "not_found",
      "result_conflict",
      "output_incomplete",
      "lifetime_ended",
      "job_expired",
      "inbox_full",
    ),
  },
});

export const postHeartbeat = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/exec-jobs/{handle}/heartbeat",
  operationId: "postHeartbeat",
  tags,
  summary: "Tell exec-inbox a running job is alive, with its progress (runner, callback token)",
  description:
    "The heartbeat timeout counts again from now. `output_tail` (≤ 16 KiB) and `output_bytes_total` show as the job's `progress`. The answer carries `cancel_requested`: end the command and post its result with `ended_by: kill_request`. 409 (the job has a result) and 410: stop heartbeating.",
  security: CALLBACK,
  request: { params: jobParams, body: { required: false, ...json(heartbeatBody) } },
  responses: {
    200: { description: "Alive", ...json(heartbeatReply) },
    ...problems(
      ...EVERY_ROUTE,
      ...WITH_BODY,
      "unauthorized",
      "not_found",
      "result_conflict",
      "lifetime_ended",
      "job_expired",
    ),
  },
});

export const cancelJob = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/exec-jobs/{handle}/cancel",
  operationId: "cancelJob",
  tags,
  summary: "Ask the runner to end a running job",
  description:
    "The runner learns it from its next heartbeat's answer, ends the command and posts its result (`ended_by: kill_request`). Cancel never invents a result: the job runs until the runner posts one or its heartbeat timeout passes. Again → 202, nothing new.",
  security: AGENT,
  request: { params: jobParams, body: { required: false, ...json(noFieldsBody) } },
  responses: {
    202: { description: "Requested", ...json(cancelRequestedSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, "invalid_transition", "job_expired"),
  },
});
