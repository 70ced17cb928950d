// The detail of a 401 when the bearer is a known token of the wrong kind: which kind was sent and
// which the route takes. Never the token, and nothing about sessions or tenants it could reach.
import type { TokenKind } from "../auth/token-kind";

export type RouteKind = "agent" | "operator" | "completion";

const SENT: Record<TokenKind, string> = {
  agent: "this is an agent token",
  operator: "this is an operator token",
  callback: "this is a callback token",
};

const TAKES: Record<RouteKind, string> = {
  agent: "agent routes take an AGENT_TOKENS token",
  operator: "/v1/ops routes take an OPERATOR_TOKENS token",
  completion: "a completion or heartbeat takes the job's callback token from its reservation",
};

const UNKNOWN: Record<RouteKind, string> = {
  agent: "missing or invalid agent token",
  operator: "missing or invalid operator token",
  completion: "missing or invalid callback token for this job",
};

/** `sent` is the kind of the refused bearer (null when it is no known token). */
export function refusalDetail(route: RouteKind, sent: TokenKind | null): string {
  if (sent === null) return UNKNOWN[route];
  // A callback token refused by a completion belongs to another job or session.
  if (route === "completion" && sent === "callback") {
    return "this is the callback token of another job; a completion takes the callback token of the job it completes, from its reservation";
  }
  if (route === "agent" && sent === "callback") {
    return `${SENT.callback}; it opens only its job's completion and heartbeat (POST …/exec-jobs/{handle}/completion, …/heartbeat)`;
  }
  return `${SENT[sent]}; ${TAKES[route]}`;
}
