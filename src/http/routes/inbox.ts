// Route table, inbox: counts, claim with a lease, idempotent ack.
import { createRoute } from "@hono/zod-openapi";
import { ackBody, claimBody } from "../../domain/schemas";
import { ackedSchema, claimsSchema, inboxCountsSchema } from "../schemas/inbox";
import { AUTHENTICATED, LIMITED, problems, WITH_BODY } from "../schemas/problem";
import { AGENT, json, sessionParams } from "./common";

const tags = ["Inbox"];

export const getInbox = createRoute({
  method: "get",
  path: "/v1/sessions/{sid}/inbox",
  operationId: "getInbox",
  tags,
  summary: "Inbox counts",
  security: AGENT,
  request: { params: sessionParams },
  responses: {
    200: { description: "Counts", ...json(inboxCountsSchema) },
    ...problems(...AUTHENTICATED, ...LIMITED),
  },
});

export const claimInbox = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/inbox/claim",
  operationId: "claimInbox",
  tags,
  summary: "Claim envelopes with a lease, in generation order",
  description: "Items whose lease expired are claimable again. The body is optional.",
  security: AGENT,
  request: { params: sessionParams, body: { required: false, ...json(claimBody) } },
  responses: {
    200: { description: "The claims", ...json(claimsSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY),
  },
});

export const ackInbox = createRoute({
  method: "post",
  path: "/v1/sessions/{sid}/inbox/ack",
  operationId: "ackInbox",
  tags,
  summary: "Acknowledge envelopes (idempotent)",
  security: AGENT,
  request: { params: sessionParams, body: { required: true, ...json(ackBody) } },
  responses: {
    200: { description: "Acked and unknown ids", ...json(ackedSchema) },
    ...problems(...AUTHENTICATED, ...WITH_BODY),
  },
});
