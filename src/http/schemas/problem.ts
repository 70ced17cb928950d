// The problem+json answers of the route table: for a list of error codes, one response per HTTP
// status whose schema names exactly the codes that status can carry. Writing them is problem.ts's.
import { z } from "zod";
import { ERROR_STATUS, type ErrorCode } from "../../domain/errors";

const DESCRIPTIONS: Record<number, string> = {
  401: "Missing or invalid bearer token",
  403: "Forbidden",
  404: "No such session, job, tenant or route",
  405: "The path is known and does not take this method: Allow lists the ones it takes",
  409: "Conflict with the session's state",
  410: "Gone: the lifetime ended or the job was purged",
  413: "Body or field over its limit",
  415: "Not a JSON media type, or a charset label other than UTF-8",
  416: "The range starts past the end of the output: Content-Range names its size",
  422: "A part whose bytes do not match its length or SHA-256, malformed JSON, JSON nested deeper than 128 levels, or a body, query or path that fails validation",
  429: "Too many: the inbox backlog is full, a quota is reached, too many long-polls are open, or the token's rate limit: retry after Retry-After seconds",
  500: "Internal error, or the Worker is misconfigured",
  503: "The session could not be opened or served now (its storage out of memory, the object overloaded): retry after Retry-After seconds",
};

/** The headers problem.ts sends with a status, beside the body. */
const HEADERS: Record<number, z.ZodObject> = {
  401: z.object({
    "www-authenticate": z.literal("Bearer").meta({ description: "The scheme every route takes" }),
  }),
  416: z.object({
    "content-range": z.string().meta({ description: "`bytes */<size>`: the output's size" }),
  }),
  429: z.object({ "retry-after": z.string().meta({ description: "Seconds" }) }),
  503: z.object({ "retry-after": z.string().meta({ description: "Seconds" }) }),
};

const problemSchema = (codes: [ErrorCode, ...ErrorCode[]], status: number) =>
  z.strictObject({
    type: z.string().meta({ description: "An identifier per code, not a page" }),
    title: z.string(),
    status: z.literal(status),
    detail: z.string(),
    code: z.enum(codes),
    errors: z
      .array(z.strictObject({ path: z.string(), message: z.string() }))
      .optional()
      .meta({
        description:
          "Each validation issue (422), or each part a completion names and storage lacks (409 `output_incomplete`)",
      }),
  });

type ProblemResponse = {
  description: string;
  content: { "application/problem+json": { schema: ReturnType<typeof problemSchema> } };
  headers?: z.ZodObject;
};

/** One problem response per status the codes map to, each listing its codes. */
export function problems(...codes: ErrorCode[]): Record<number, ProblemResponse> {
  const byStatus = new Map<number, [ErrorCode, ...ErrorCode[]]>();
  for (const code of new Set(codes)) {
    const status = ERROR_STATUS[code];
    const listed = byStatus.get(status);
    if (listed === undefined) byStatus.set(status, [code]);
    else listed.push(code);
  }
  const responses: Record<number, ProblemResponse> = {};
  for (const [status, listed] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers = HEADERS[status];
    responses[status] = {
      // In backticks: OpenAPI descriptions are Markdown, where `_` would start emphasis.
      description: `${DESCRIPTIONS[status] ?? "Error"} (code: ${listed.map((code) => `\`${code}\``).join(", ")})`,
      content: { "application/problem+json": { schema: problemSchema(listed, status) } },
      ...(headers === undefined ? {} : { headers }),
    };
  }
  return responses;
}

/** The answer of a documented path to a method it has no operation for (no operation gives it). */
export const methodNotAllowedResponse = {
  description: DESCRIPTIONS[405] as string,
  headers: {
    allow: {
      required: true,
      description: "The methods the path takes, e.g. `POST, OPTIONS`",
      schema: { type: "string" as const },
    },
  },
  schema: problemSchema(["method_not_allowed"], 405),
};

/** What every route can answer: a declared body over 2 MiB, and a Worker that refuses to serve. */
export const EVERY_ROUTE: ErrorCode[] = ["payload_too_large", "internal"];
/**
 * Agent and operator routes add a refused token; path ids outside the charset are not found; the
 * session object (or the index) they reach may be unable to serve for now.
 */
export const AUTHENTICATED: ErrorCode[] = [
  ...EVERY_ROUTE,
  "unauthorized",
  "not_found",
  "unavailable",
];
/** Routes with a JSON body or a query add its validation failures. */
export const WITH_BODY: ErrorCode[] = ["unsupported_media_type", "invalid_request"];
/** Agent routes counted by the rate limit per token (src/http/rate-limit.ts; not the drains). */
export const LIMITED: ErrorCode[] = ["rate_limited"];
