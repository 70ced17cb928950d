// The console's sign-in: the operator token lives in a session cookie (no expiry, HttpOnly,
// SameSite=Strict, Path=/console), checked against OPERATOR_TOKENS on every console request.
// What a signed-out visitor sees is left to the routes.
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { isListedToken } from "../auth/agent-token";
import type { AppEnv } from "../http/context";

/** The console's variables on top of the app's: the signed-in token ("" when none), a CSP nonce. */
export type ConsoleEnv = {
  Bindings: AppEnv["Bindings"];
  Variables: AppEnv["Variables"] & { operator: string; nonce: string };
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
