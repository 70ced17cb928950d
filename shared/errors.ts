// The closed set of error codes on the wire (contract section 4) and their HTTP statuses: what the
// Worker and the runner answer with, and what the client reads. Domain failures are left to src/domain.

export const ERROR_STATUS = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  session_exists: 409,
  run_conflict: 409,
  job_conflict: 409,
  result_conflict: 409,
  invalid_transition: 409,
  output_incomplete: 409,
  lifetime_ended: 410,
  job_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  invalid_request: 422,
  digest_mismatch: 422,
  inbox_full: 429,
  quota_exceeded: 429,
  too_many_long_polls: 429,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;
