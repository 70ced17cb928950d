// Route table, full outputs (contract §9): the runner's part upload (callback token) and the
// agent's ranged read. The handlers live in src/http/outputs.ts.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import {
  MAX_PARTS,
  PART_SHA256_HEADER,
  partReceipt,
  SHA256_HEX,
} from "../../../shared/full-output";
import { AUTHENTICATED, EVERY_ROUTE, problems } from "../schemas/problem";
import { AGENT, CALLBACK, jobParams, json, OPERATOR, opsJobParams } from "./common";

const tags = ["Exec jobs"];

export const partParams = jobParams.extend({
  index: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,2})$/, `0 to ${MAX_PARTS - 1}`)
    .meta({ description: `The part's place in the output, 0 to ${MAX_PARTS - 1}` }),
});

const binary = z.string().meta({ format: "binary" });

export const uploadPart = createRoute({
  method: "put",
  path: "/v1/sessions/{sid}/exec-jobs/{handle}/output/parts/{index}",
  operationId: "uploadOutputPart",
  tags,
  summary: "Upload one part of a job's full output (runner, callback token)",
  description:
    "At most 64 MiB, with `Content-Length` and the part's SHA-256 in `x-content-sha256`; the bytes stream to object storage and are checked on arrival. A part sent again replaces itself. A job may upload parts until it has a result; its completion then names them in `full_output`.",
  security: CALLBACK,
  request: {
    params: partParams,
    headers: z.object({
      [PART_SHA256_HEADER]: z
        .string()
        .regex(SHA256_HEX, "64 lowercase hex digits")
        .meta({ description: "The part's SHA-256, hex" }),
    }),
    body: { required: true, content: { "application/octet-stream": { schema: binary } } },
  },
  responses: {
    201: { description: "Stored and checked", ...json(partReceipt) },
    ...problems(
      ...EVERY_ROUTE,
      "unauthorized",
      "not_found",
      "result_conflict",
      "lifetime_ended",
      "job_expired",
      "payload_too_large",
      "invalid_request",
      "digest_mismatch",
    ),
  },
});

/** What the agent's and the operator's reads of a full output take and answer alike. */
const rangeHeader = z.object({
  range: z.string().optional().meta({ description: "`bytes=<first>-<last>`, one range" }),
  "if-range": z.string().optional().meta({
    description:
      "The `ETag` of the output a resumed read began on: the range if it is still that output, else 200 and the whole output",
  }),
});
const outputAnswers = {
  200: {
    description: "The whole output",
    content: { "application/octet-stream": { schema: binary } },
  },
  206: {
    description: "The bytes the range names",
    content: { "application/octet-stream": { schema: binary } },
  },
  ...problems(...AUTHENTICATED, "job_expired", "range_not_satisfiable"),
};

export const getOutput = createRoute({
  method: "get",
  path: "/v1/sessions/{sid}/exec-jobs/{handle}/output",
  operationId: "getFullOutput",
  tags,
  summary: "Read a job's full output, whole or by byte range",
  description:
    "One `Range: bytes=a-b` (or `a-`, `-n`) → 206 with `Content-Range`; none → 200, the whole output streamed. The `ETag` is the output's SHA-256; an `If-Range` other than it (a weak tag, a date) → 200, the whole output. A range starting past the end → 416. 404 when the job has no full output; 410 once the job was purged.",
  security: AGENT,
  request: {
    params: jobParams,
    headers: rangeHeader,
  },
  responses: outputAnswers,
});

export const opsGetOutput = createRoute({
  method: "get",
  path: "/v1/ops/sessions/{tenant}/{sid}/exec-jobs/{handle}/output",
  operationId: "opsGetFullOutput",
  tags: ["Operators"],
  summary: "Read a job's full output, whole or by byte range (the console's link)",
  description: "As the agent's `getFullOutput`, with an operator token.",
  security: OPERATOR,
  request: {
    params: opsJobParams,
    headers: rangeHeader,
  },
  responses: outputAnswers,
});
