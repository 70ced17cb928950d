// A domain failure: one code of the closed set (shared/errors.ts) with a detail.
// Building the problem+json response is left to the HTTP layer.

import type { ErrorCode } from "../../shared/errors";

export { ERROR_STATUS, type ErrorCode } from "../../shared/errors";

export interface Failure {
  readonly ok: false;
  readonly code: ErrorCode;
  readonly detail: string;
}

export type Result<T> = { readonly ok: true; readonly value: T } | Failure;

export const fail = (code: ErrorCode, detail: string): Failure => ({ ok: false, code, detail });
