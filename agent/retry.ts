// Which failures of exec-inbox and the runner are worth another try, and the bounded retry loop.
// Only `not_found` (404) and `lifetime_ended` (410) say a session is gone; a 5xx, a 429 or a
// dropped connection says nothing about it, so the kit retries those instead of dropping work.
import { setTimeout as sleep } from "node:timers/promises";
import { ExecInboxError } from "@exec-inbox/client";
import { RunnerError } from "./runner-client";

/** exec-inbox says the session (or this lifetime of it) no longer exists. */
/** Registering a run for a resume the session no longer holds: a newer wake replaced it. */
export const isStaleResume = (error: unknown): boolean =>
  error instanceof ExecInboxError &&
  error.problem.status === 409 &&
  error.problem.code === "invalid_transition";

export const isSessionGone = (error: unknown): boolean =>
  error instanceof ExecInboxError &&
  ((error.problem.status === 404 && error.problem.code === "not_found") ||
    (error.problem.status === 410 && error.problem.code === "lifetime_ended"));

/** A server-side hiccup, rate limit or network failure: the same request may succeed later. */
export const isTransient = (error: unknown): boolean => {
  const status =
    error instanceof ExecInboxError
      ? error.problem.status
      : error instanceof RunnerError
        ? error.status
        : undefined;
  if (status !== undefined) return status >= 500 || status === 429;
  // fetch rejects with a TypeError when the connection fails or is reset.
  return error instanceof TypeError;
};

export interface RetryOptions {
  readonly attempts?: number;
  readonly firstDelayMs?: number;
}

/** The longest Retry-After the kit waits out between two attempts; a longer one is cut to this. */
const MOST_RETRY_AFTER_MS = 30_000;

/**
 * Calls `call` until it succeeds, fails for good, or `attempts` transient failures in a row. A
 * Retry-After (a 503 `unavailable` session, a 429 `inbox_full`) stretches the wait before the next
 * attempt: retrying sooner than asked would only spend the attempts while the server recovers.
 */
export async function retrying<T>(call: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const { attempts = 5, firstDelayMs = 200 } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= attempts || !isTransient(error)) throw error;
      const asked = error instanceof ExecInboxError ? (error.retryAfterMs ?? 0) : 0;
      await sleep(
        Math.max(firstDelayMs * 2 ** (attempt - 1), Math.min(asked, MOST_RETRY_AFTER_MS)),
      );
    }
  }
}
