// The console's sign-in: the operator token lives in a session cookie (no expiry, HttpOnly,
// SameSite=Strict, Path=/console), checked against OPERATOR_TOKENS on every console request.
// What a signed-out visitor sees is left to the routes.
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { isListedToken } from "../auth/agent-token";
import type { AppEnv } from "../http/context";

/**
 * The console's variables on top of the app's: the signed-in token ("" when none), a CSP nonce,
 * and the form token every console form carries ("" when signed out).
 */
export type ConsoleEnv = {
  Bindings: AppEnv["Bindings"];
  Variables: AppEnv["Variables"] & { operator: string; nonce: string; formToken: string };
};
export type ConsoleContext = Context<ConsoleEnv>;

const CONSOLE_COOKIE = "exec_inbox_operator";
const PATH = "/console";

/** The signed-in operator's token, or null when the cookie is missing or no longer listed. */
export function operatorToken(c: ConsoleContext): string | null {
  const token = getCookie(c, CONSOLE_COOKIE) ?? null;
  return token !== null && isOperatorToken(c, token) ? token : null;
}

export const isOperatorToken = (c: ConsoleContext, token: string): boolean =>
  token !== "" && isListedToken(token, c.var.config.operatorTokens);

/** A session cookie: no Max-Age or Expires, so closing the browser signs the operator out. */
export function signIn(c: Context, token: string): void {
  setCookie(c, CONSOLE_COOKIE, token, {
    path: PATH,
    httpOnly: true,
    sameSite: "Strict",
    secure: new URL(c.req.url).protocol === "https:",
  });
}

export function signOut(c: Context): void {
  deleteCookie(c, CONSOLE_COOKIE, {
    path: PATH,
    secure: new URL(c.req.url).protocol === "https:",
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
 * An HMAC of a fixed label keyed by the cookie's token: only a page that was served the console's
 * HTML knows it, so a page elsewhere on the origin that can post a form but not read the console
 * cannot drive an operator action.
 */
export async function formToken(operator: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(operator),
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

/** Whether the POSTed form echoes the signed-in operator's form token. */
export async function carriesFormToken(c: ConsoleContext, expected: string): Promise<boolean> {
  const type = c.req.header("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type)) return false;
  const sent = (await c.req.parseBody())[FORM_TOKEN_FIELD];
  if (typeof sent !== "string") return false;
  const [a, b] = [encoder.encode(sent), encoder.encode(expected)];
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}
