// The console's sign-in: an opaque session id in a session cookie (HttpOnly, SameSite=Strict,
// Path=/console, Secure over HTTPS), looked up server-side on every console request (the rows are
// console-sessions.ts', the rules domain/console-session.ts'), and the device cookie the sign-in
// throttle knows a browser by. What a visitor sees is the routes'.
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { isListedToken } from "../auth/agent-token";
import { judgeSession } from "../domain/console-session";
import type { AppEnv } from "../http/context";
import { endSession, findSession, sha256Hex, touchSession } from "./console-sessions";

/**
 * The console's variables on top of the app's: the signed-in operator's token ("" when none), the
 * console session id ("" when none), a CSP nonce, and the form token every console form carries.
 */
export type ConsoleEnv = {
  Bindings: AppEnv["Bindings"];
  Variables: AppEnv["Variables"] & {
    operator: string;
    consoleSession: string;
    nonce: string;
    formToken: string;
  };
};
export type ConsoleContext = Context<ConsoleEnv>;

const CONSOLE_COOKIE = "exec_inbox_operator";
const PATH = "/console";
/** The console's own refresh script sends this: a page refreshing itself is not an operator. */
export const REFRESH_HEADER = "x-console-refresh";

export const isOperatorToken = (c: ConsoleContext, token: string): boolean =>
  token !== "" && isListedToken(token, c.var.config.operatorTokens);

/** The cookie's session id, if any (whether it is live is `signedIn`'s question). */
export const sessionCookie = (c: Context): string | null => getCookie(c, CONSOLE_COOKIE) ?? null;

/**
 * The signed-in operator's token and session id, or null when the cookie names no live session
 * (never issued, signed out, idle, past its lifetime) or its token left OPERATOR_TOKENS. An ended
 * session's row is deleted here, so it can never come back.
 */
export async function signedIn(
  c: ConsoleContext,
  now: number,
): Promise<{ token: string; sessionId: string } | null> {
  const sessionId = sessionCookie(c);
  const db = c.env.INDEX;
  if (sessionId === null || sessionId === "" || db === undefined) return null;
  const row = await findSession(db, sessionId);
  if (row === null) return null;
  const verdict = judgeSession(row, now, c.req.header(REFRESH_HEADER) === undefined);
  if (verdict.state === "ended") {
    await endSession(db, sessionId);
    return null;
  }
  const token = await listedTokenOf(c, row.operatorHash);
  if (token === null) {
    await endSession(db, sessionId);
    return null;
  }
  if (verdict.touch) await touchSession(db, sessionId, now);
  return { token, sessionId };
}

/** The OPERATOR_TOKENS entry whose hash the session holds (the table keeps no token). */
async function listedTokenOf(c: ConsoleContext, operatorHash: string): Promise<string | null> {
  for (const token of c.var.config.operatorTokens) {
    if ((await sha256Hex(token)) === operatorHash) return token;
  }
  return null;
}

const secure = (c: Context): boolean => new URL(c.req.url).protocol === "https:";

/** A session cookie: no Max-Age or Expires, so closing the browser drops it too. */
export function setSessionCookie(c: Context, sessionId: string): void {
  setCookie(c, CONSOLE_COOKIE, sessionId, {
    path: PATH,
    httpOnly: true,
    sameSite: "Strict",
    secure: secure(c),
  });
}

export function clearSessionCookie(c: Context): void {
  deleteCookie(c, CONSOLE_COOKIE, {
    path: PATH,
    httpOnly: true,
    sameSite: "Strict",
    secure: secure(c),
  });
}

/**
 * A POST must come from a console page of this origin: SameSite=Strict keeps the cookie off
 * cross-site requests, and the Origin check refuses them even where a browser sends it anyway.
 */
export function isSameOrigin(c: Context): boolean {
  const origin = c.req.header("origin");
  return origin !== undefined && origin === new URL(c.req.url).origin;
}

/** The hidden field every console form carries, and every console POST must echo. */
export const FORM_TOKEN_FIELD = "form_token";
const encoder = new TextEncoder();

/**
 * An HMAC of a fixed label keyed by the console session id: only a page served to this sign-in
 * knows it, so a page elsewhere on the origin that can post a form but not read the console cannot
 * drive an operator action, and a token captured before sign-out opens nothing after it.
 */
export async function formToken(sessionId: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(sessionId),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode("exec-inbox console form"));
  return btoa(String.fromCharCode(...new Uint8Array(mac)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

const DEVICE_COOKIE = "exec_inbox_device";
/** A browser stays known this long after its last sign-in. */
const DEVICE_MAX_AGE_S = 30 * 24 * 60 * 60;
const DEVICE_NONCE = /^[A-Za-z0-9_-]{22}$/;

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

async function deviceMac(operatorToken: string, nonce: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(operatorToken),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`exec-inbox device ${nonce}`));
  return base64url(new Uint8Array(mac));
}

/**
 * The device cookie's nonce when an operator token of OPERATOR_TOKENS signed it, else null. It
 * says only "this browser signed in before": it opens nothing, and gives the browser a sign-in
 * count of its own (domain/console-session.ts `signInBudgets`) that no other client can use up.
 */
export async function knownDevice(c: ConsoleContext): Promise<string | null> {
  const [nonce = "", mac = ""] = (getCookie(c, DEVICE_COOKIE) ?? "").split(".");
  if (!DEVICE_NONCE.test(nonce)) return null;
  const sent = encoder.encode(mac);
  for (const token of c.var.config.operatorTokens) {
    const expected = encoder.encode(await deviceMac(token, nonce));
    if (sent.byteLength === expected.byteLength && crypto.subtle.timingSafeEqual(sent, expected)) {
      return nonce;
    }
  }
  return null;
}

/** After a sign-in: the browser is known (again) for DEVICE_MAX_AGE_S, under the token it used. */
export async function setDeviceCookie(c: Context, operatorToken: string): Promise<void> {
  const nonce = base64url(crypto.getRandomValues(new Uint8Array(16)));
  setCookie(c, DEVICE_COOKIE, `${nonce}.${await deviceMac(operatorToken, nonce)}`, {
    path: PATH,
    httpOnly: true,
    sameSite: "Strict",
    secure: secure(c),
    maxAge: DEVICE_MAX_AGE_S,
  });
}

/** Whether the POSTed form echoes the signed-in operator's form token. */
export async function carriesFormToken(c: ConsoleContext, expected: string): Promise<boolean> {
  const type = c.req.header("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type)) return false;
  const sent = (await c.req.parseBody())[FORM_TOKEN_FIELD];
  if (typeof sent !== "string") return false;
  const [a, b] = [encoder.encode(sent), encoder.encode(expected)];
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}
