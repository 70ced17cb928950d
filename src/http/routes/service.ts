// Route table, service routes without authentication: liveness and this document.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { EVERY_ROUTE, problems } from "../schemas/problem";
import { frontDoorSchema, healthSchema, objectHealthSchema } from "../schemas/views";
import { json } from "./common";

const tags = ["Service"];

export const frontDoor = createRoute({
  method: "get",
  path: "/",
  operationId: "frontDoor",
  tags,
  summary: "The front door: version, health and where to go next",
  description:
    "A small HTML page for a browser; this JSON for `Accept: application/json` (or no preference).",
  security: [],
  responses: {
    200: {
      description: "The service, its health and its pages",
      content: {
        "application/json": { schema: frontDoorSchema },
        "text/html": { schema: z.string() },
      },
    },
    ...problems(...EVERY_ROUTE),
  },
});

export const health = createRoute({
  method: "get",
  path: "/healthz",
  operationId: "health",
  tags,
  summary: "Liveness and version",
  security: [],
  responses: { 200: { description: "Alive", ...json(healthSchema) }, ...problems(...EVERY_ROUTE) },
});

export const objectHealth = createRoute({
  method: "get",
  path: "/healthz/object",
  operationId: "objectHealth",
  tags,
  summary: "One no-op Durable Object call",
  security: [],
  responses: {
    200: { description: "The object answered", ...json(objectHealthSchema) },
    ...problems(...EVERY_ROUTE),
  },
});

export const openApiDocument = createRoute({
  method: "get",
  path: "/openapi.json",
  operationId: "openApiDocument",
  tags,
  summary: "This OpenAPI 3.1 document",
  security: [],
  responses: {
    200: {
      description: "The document",
      ...json(
        z.looseObject({ openapi: z.literal("3.1.0"), paths: z.record(z.string(), z.unknown()) }),
      ),
    },
    ...problems(...EVERY_ROUTE),
  },
});
