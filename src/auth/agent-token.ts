// Agent host authentication: a bearer token compared in constant time against AGENT_TOKENS.
// Turning a refusal into a 401 response is left to the HTTP layer.
import { createHash, timingSafeEqual } from "node:crypto";

const digest = (value: string): Buffer => createHash("sha256").update(value).digest();

export function bearerToken(header: string | undefined | null): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1] ?? null;
}

export function isAgentToken(token: string | null, agentTokens: readonly string[]): boolean {
  if (token === null) return false;
  // Hashing first gives equal lengths, so the comparison itself leaks nothing about the token.
  const given = digest(token);
  let valid = false;
  for (const candidate of agentTokens) {
    if (timingSafeEqual(given, digest(candidate))) valid = true;
  }
  return valid;
}
