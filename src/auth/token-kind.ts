// Names the kind of a bearer token a route refused (agent, operator or callback), so the refusal
// can say which one was sent. Whether to refuse, and the words, are left to the HTTP layer.
import type { Config } from "../domain/config";
import { isListedToken, tenantOfToken } from "./agent-token";
import { verifyCallbackToken } from "./callback-token";

export type TokenKind = "agent" | "operator" | "callback";

type TokenLists = Pick<Config, "agentTokens" | "operatorTokens" | "callbackSecrets">;

/** The kind of a known token, or null for a forged, missing or retired one. */
export function tokenKind(token: string | null, lists: TokenLists): TokenKind | null {
  if (token === null) return null;
  if (tenantOfToken(token, lists.agentTokens) !== null) return "agent";
  if (isListedToken(token, lists.operatorTokens)) return "operator";
  return verifyCallbackToken(token, lists.callbackSecrets) === null ? null : "callback";
}
