// Route table, runs: register, suspend, finish and the notifications long-poll.
import { createRoute } from "@hono/zod-openapi";
import {
  finishRunBody,
  notificationsQuery,
  registerRunBody,
  suspendBody,
} from "../../domain/schemas";
import { AUTHENTICATED, LIMITED, problems, WITH_BODY } from "../schemas/problem";
import { notificationsSchema, runRegisteredSchema, sessionViewSchema } from "../schemas/views";
import { AGENT, json, runParams, sessionParams } from "./common";

const tags = ["Runs"];

export const registerRun = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/runs",
  operationId: "registerRun",
  tags,
  summary: "Register a run (status → running)",
  description:
    "Takes the pending resume: it is completed and never delivered again. Registering the active run's id again answers it again; a run id that already finished in this lifetime, or a resume a run already took, is refused (409 `invalid_transition`): a run id is used once per lifetime. The body is optional. Past the token's rate limit, only the host answering its wake registers: a body naming the session's own pending `resume_id` (or the run that took it, again); any other gets 429 `rate_limited`.",
  security: AGENT,
  request: { params: sessionParams, body: { required: false, ...json(registerRunBody) } },
  responses: {
    201: { description: "The run", ...json(runRegisteredSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, "run_conflict", "invalid_transition", ...LIMITED),
  },
});

export const suspendRun = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/runs/{run_id}/suspend",
  operationId: "suspendRun",
  tags,
  summary: "Suspend the run, waiting for background commands",
  description:
    "Ends the run's turn and arms a wait for the handles (`wake: all|any`, ceiling `ceiling_ms`). If the wake condition already holds, the resume is scheduled at once.",
  security: AGENT,
  request: { params: runParams, body: { required: true, ...json(suspendBody) } },
  responses: {
    200: { description: "The session view", ...json(sessionViewSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, "invalid_transition"),
  },
});

export const finishRun = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/runs/{run_id}/finish",
  operationId: "finishRun",
  tags,
  summary: "Finish the run",
  description:
    "Idle, or back to suspended if a wait is still armed; unclaimed inbox items get one resume. The body is optional and empty.",
  security: AGENT,
  request: { params: runParams, body: { required: false, ...json(finishRunBody) } },
  responses: {
    200: { description: "The session view", ...json(sessionViewSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, "invalid_transition"),
  },
});

export const runNotifications = createRoute({
  method: "get",
  path: "/v1/sessions/{sid}/runs/{run_id}/notifications",
  operationId: "runNotifications",
  tags,
  summary: "Long-poll inbox admissions while the run is active",
  description: "Answers as soon as `notify_seq > after`, else after `wait_ms` (0–30000).",
  security: AGENT,
  request: { params: runParams, query: notificationsQuery },
  responses: {
    200: { description: "The counters", ...json(notificationsSchema) },
    ...problems(
      ...AUTHENTICATED,
      "invalid_request",
      "invalid_transition",
      "too_many_long_polls",
      ...LIMITED,
    ),
  },
});
