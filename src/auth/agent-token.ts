// Agent host authentication: a bearer token compared in constant time against AGENT_TOKENS, which
// names the tenant the host acts for. Turning a refusal into a 401 response is left to HTTP.
import { createHash, timingSafeEqual } from "node:crypto";
import type { AgentToken } from "../domain/tenants";

export { bearerToken } from "../../shared/bearer-token";

const digest = (value: string): Buffer => createHash("sha256").update(value).digest();

/** The tenant whose token was presented, or null when none matches. */
export function tenantOfToken(
  token: string | null,
  agentTokens: readonly AgentToken[],
): string | null {
  if (token === null) return null;
  // Hashing first gives equal lengths, and every entry is compared, so timing tells nothing.
  const given = digest(token);
  let tenant: string | null = null;
  for (const candidate of agentTokens) {
    if (timingSafeEqual(given, digest(candidate.token))) tenant = candidate.tenant;
  }
  return tenant;
}

/** True when the token is one of `tokens` (tenant-less lists: OPERATOR_TOKENS, RUNNER_TOKENS). */
export const isListedToken = (token: string | null, tokens: readonly string[]): boolean =>
  tenantOfToken(
    token,
    tokens.map((candidate) => ({ tenant: "", token: candidate })),
  ) !== null;
