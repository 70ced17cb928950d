// The rules of an operator's console session and of sign-in throttling, as pure functions of the
// stored row and the time. Storing rows and reading cookies are left to src/console/.

/** A session no request has used for this long is over (a self-refreshing page does not count). */
export const CONSOLE_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
/** However active, a session ends this long after sign-in: an operator signs in again daily. */
export const CONSOLE_SESSION_MAX_MS = 12 * 60 * 60 * 1000;
/** `last_seen_at` is written at most this often, so browsing a page costs no write per request. */
export const CONSOLE_TOUCH_EVERY_MS = 60 * 1000;
/** Wrong tokens a client may send per window before sign-in answers 429 without checking. */
export const SIGN_IN_FAILURES_PER_WINDOW = 5;
export const SIGN_IN_WINDOW_MS = 60 * 1000;

export interface ConsoleSessionRow {
  readonly createdAt: number;
  readonly lastSeenAt: number;
}

/** `live` (and whether to record this request as activity) or `ended`, with why. */
export type SessionVerdict =
  | { readonly state: "live"; readonly touch: boolean }
  | { readonly state: "ended"; readonly why: "idle" | "lifetime" };

export function judgeSession(row: ConsoleSessionRow, now: number, active: boolean): SessionVerdict {
  if (now - row.createdAt >= CONSOLE_SESSION_MAX_MS) return { state: "ended", why: "lifetime" };
  if (now - row.lastSeenAt >= CONSOLE_IDLE_TIMEOUT_MS) return { state: "ended", why: "idle" };
  return { state: "live", touch: active && now - row.lastSeenAt >= CONSOLE_TOUCH_EVERY_MS };
}

/** The oldest `last_seen_at` a live session can have: rows older than this are garbage. */
export const staleBefore = (now: number): number => now - CONSOLE_IDLE_TIMEOUT_MS;

/** A client's sign-in attempts in the current window, this one counted (a success clears them). */
export interface AttemptWindow {
  readonly windowStart: number;
  readonly attempts: number;
}

/**
 * Whether this sign-in may be checked, or must wait `retryAfterMs` (to the window's end). The
 * attempt is counted before the token is checked, so a burst of parallel guesses is held too.
 */
export function signInAllowed(
  window: AttemptWindow,
  now: number,
): { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number } {
  if (window.attempts <= SIGN_IN_FAILURES_PER_WINDOW) return { allowed: true };
  return {
    allowed: false,
    retryAfterMs: Math.max(0, window.windowStart + SIGN_IN_WINDOW_MS - now),
  };
}

/**
 * Whom the throttle counts: the client address Cloudflare gives (`CF-Connecting-IP`), an IPv6
 * address by its /64 (one host holds a whole /64); without one, every such client shares a count.
 */
export function throttleKey(address: string | null): string {
  if (address === null || address === "") return "unknown";
  if (!address.includes(":")) return address;
  // Expand `::` so that every spelling of one /64 gives the same key.
  const [head = "", tail] = address.toLowerCase().split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = [
    ...left,
    ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"),
    ...right,
  ];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}
