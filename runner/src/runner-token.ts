// The runner's own authentication: a bearer token compared in constant time against RUNNER_TOKENS.
// Reading the header is shared/bearer-token.ts's; answering 401 is the server's.
import { createHash, timingSafeEqual } from "node:crypto";

const digest = (value: string): Buffer => createHash("sha256").update(value).digest();

/** True when the token is one of `tokens`; every entry is compared, so timing tells nothing. */
export function isListedToken(token: string | null, tokens: readonly string[]): boolean {
  if (token === null) return false;
  // Hashing first gives equal lengths.
  const given = digest(token);
  let listed = false;
  for (const candidate of tokens) {
    if (timingSafeEqual(given, digest(candidate))) listed = true;
  }
  return listed;
}
