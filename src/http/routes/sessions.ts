// Route table, sessions and messages: what each route takes and every answer it can give.
import { createRoute } from "@hono/zod-openapi";
import {
  appendMessageBody,
  createSessionBody,
  messagesQuery,
  setRunnerBody,
} from "../../domain/schemas";
import { AUTHENTICATED, EVERY_ROUTE, LIMITED, problems, WITH_BODY } from "../schemas/problem";
import {
  messageIndexSchema,
  messagesPageSchema,
  sessionViewSchema,
  statsSchema,
} from "../schemas/views";
import { AGENT, json, sessionParams } from "./common";

const tags = ["Sessions"];

export const createSession = createRoute({
  method: "post",
  path: "/v1/sessions",
  operationId: "createSession",
  tags,
  summary: "Create a session",
  description:
    "The session belongs to the tenant of the agent token. `runner` names the runner its MCP tools call (`url` checked against the runner allowlist; `token` write-only). `resume_url` must match an origin of the resume allowlist; without it the tenant's default webhook URL is used. `resume_binding` instead names a service binding of the deployment (listed in the binding allowlist) whose `wake(resume)` is called with the webhook's body; a session names one or the other, not both.",
  security: AGENT,
  request: { body: { required: true, ...json(createSessionBody) } },
  responses: {
    201: { description: "The new session", ...json(sessionViewSchema) },
    // No path id: nothing here can be not found.
    ...problems(
      ...EVERY_ROUTE,
      "unauthorized",
      ...WITH_BODY,
      "session_exists",
      "quota_exceeded",
      ...LIMITED,
    ),
  },
});

export const setRunner = createRoute({
  method: "put",
  path: "/v1/sessions/{sid}/runner",
  operationId: "setRunner",
  tags,
  summary: "Name, replace or remove the session's runner",
  description:
    "`{url, token}` replaces the runner the service calls for the session's MCP tools (a sandbox was replaced); `null` removes it. `url` must match an origin of the runner allowlist (no user info, query or fragment); the token is write-only: no answer shows it.",
  security: AGENT,
  request: { params: sessionParams, body: { required: true, ...json(setRunnerBody) } },
  responses: {
    200: { description: "The session view", ...json(sessionViewSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, ...LIMITED),
  },
});

export const getSession = createRoute({
  method: "get",
  path: "/v1/sessions/{sid}",
  operationId: "getSession",
  tags,
  summary: "The session view",
  security: AGENT,
  request: { params: sessionParams },
  responses: {
    200: { description: "The session view", ...json(sessionViewSchema) },
    ...problems(...AUTHENTICATED, ...LIMITED),
  },
});

export const deleteSession = createRoute({
  method: "delete",
  path: "/v1/sessions/{sid}",
  operationId: "deleteSession",
  tags,
  summary: "Delete the session: its lifetime ends",
  description:
    "Every row, timer and job of the lifetime is deleted; a completion for it is refused with 410 `lifetime_ended`, even after the id is created again.",
  security: AGENT,
  request: { params: sessionParams },
  responses: { 204: { description: "Deleted" }, ...problems(...AUTHENTICATED) },
});

export const getSessionStats = createRoute({
  method: "get",
  path: "/v1/sessions/{sid}/stats",
  operationId: "getSessionStats",
  tags,
  summary: "Billed units of the session object since it started",
  security: AGENT,
  request: { params: sessionParams },
  responses: {
    200: { description: "Counters", ...json(statsSchema) },
    ...problems(...AUTHENTICATED, ...LIMITED),
  },
});

export const appendMessage = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/messages",
  operationId: "appendMessage",
  tags,
  summary: "Append a message",
  description:
    "Never blocked by, and never lost to, a concurrent completion. At most 1 MiB of JSON.",
  security: AGENT,
  request: { params: sessionParams, body: { required: true, ...json(appendMessageBody) } },
  responses: {
    201: { description: "The message's index", ...json(messageIndexSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY, "quota_exceeded", ...LIMITED),
  },
});

export const listMessages = createRoute({
  method: "get",
  path: "/v1/sessions/{sid}/messages",
  operationId: "listMessages",
  tags,
  summary: "A page of messages by index",
  description:
    "The messages with `after < index < before`, ascending, at most `limit`; `next_after` is the last index returned when more follow.",
  security: AGENT,
  request: { params: sessionParams, query: messagesQuery },
  responses: {
    200: { description: "A page", ...json(messagesPageSchema) },
    ...problems(...AUTHENTICATED, "invalid_request", ...LIMITED),
  },
});
