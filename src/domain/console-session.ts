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
/**
 * Wrong tokens all clients without a device cookie may send together per window: what forging
 * `CF-Connecting-IP` (or spreading over addresses) can buy at most.
 */
export const SIGN_IN_GLOBAL_FAILURES_PER_WINDOW = 20;
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
  limit: number = SIGN_IN_FAILURES_PER_WINDOW,
): { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number } {
  if (window.attempts <= limit) return { allowed: true };
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

/** One count a sign-in attempt is taken from, in order; a right token gives `shared` ones back. */
export interface SignInBudget {
  readonly key: string;
  readonly limit: number;
  /** Counted for every client: a right token gives its attempt back instead of clearing it. */
  readonly shared: boolean;
}

const GLOBAL_KEY = "all";

/**
 * Whom a sign-in attempt is counted against. A browser that signed in before (its device cookie,
 * which only an operator token can sign) has a count of its own and nothing else, so no other
 * client can hold it. Every other attempt is counted per address and, past that, in one count all
 * of them share: a forged or missing `CF-Connecting-IP` can buy at most the shared count. The
 * prefixes keep a forged address from naming another kind of count.
 */
export function signInBudgets(device: string | null, address: string | null): SignInBudget[] {
  if (device !== null) {
    return [{ key: `device:${device}`, limit: SIGN_IN_FAILURES_PER_WINDOW, shared: false }];
  }
  return [
    { key: `ip:${throttleKey(address)}`, limit: SIGN_IN_FAILURES_PER_WINDOW, shared: false },
    { key: GLOBAL_KEY, limit: SIGN_IN_GLOBAL_FAILURES_PER_WINDOW, shared: true },
  ];
}
