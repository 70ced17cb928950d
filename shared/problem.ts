// Writes every error as application/problem+json (RFC 9457) with a code from the closed set.
// Which code a failure gets is decided by the domain or the validating middleware.
import { ERROR_STATUS, type ErrorCode } from "./errors";

const TITLES: Record<ErrorCode, string> = {
  unauthorized: "Unauthorized",
  forbidden: "Forbidden",
  not_found: "Not found",
  method_not_allowed: "Method not allowed",
  session_exists: "Session exists",
  run_conflict: "Run conflict",
  job_conflict: "Job conflict",
  result_conflict: "Result conflict",
  invalid_transition: "Invalid transition",
  output_incomplete: "Output incomplete",
  lifetime_ended: "Lifetime ended",
  job_expired: "Job expired",
  payload_too_large: "Payload too large",
  unsupported_media_type: "Unsupported media type",
  range_not_satisfiable: "Range not satisfiable",
  invalid_request: "Invalid request",
  digest_mismatch: "Digest mismatch",
  inbox_full: "Inbox full",
  quota_exceeded: "Quota exceeded",
  too_many_long_polls: "Too many long-polls",
  rate_limited: "Rate limited",
  internal: "Internal error",
  unavailable: "Session unavailable",
};

/**
 * Locally an idle object closes 10 s after its last request, giving its SQLite heap back; a retry
 * after 5 s meets the next of those, and a runner or kit that retries sooner only adds load.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
/** Seconds a 429 or 503 asks the caller to wait, by code (src/domain/quotas.ts says why each). */
const RETRY_AFTER_SECONDS: Partial<Record<ErrorCode, number>> = {
  inbox_full: 5,
  quota_exceeded: 5,
  too_many_long_polls: 1,
  rate_limited: 10,
  unavailable: UNAVAILABLE_RETRY_AFTER_SECONDS,
};

export function problem(
  code: ErrorCode,
  detail: string,
  // The only member the documented problem schema has beyond the fixed five (it is closed).
  extra: { errors?: readonly { path: string; message: string }[] } = {},
): Response {
  const status = ERROR_STATUS[code];
  const headers = new Headers({ "content-type": "application/problem+json" });
  if (code === "unauthorized") headers.set("www-authenticate", "Bearer");
  const retryAfter = RETRY_AFTER_SECONDS[code];
  if (retryAfter !== undefined) headers.set("retry-after", String(retryAfter));
  const body = {
    type: `https://exec-inbox.dev/problems/${code}`,
    title: TITLES[code],
    status,
    detail,
    code,
    ...extra,
  };
  return new Response(JSON.stringify(body), { status, headers });
}
