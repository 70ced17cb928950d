// The local development secrets of .dev.vars.example, so a deployed Worker can refuse to run on them.
// Keeping the two lists equal is checked by a test.
import type { Config } from "../domain/config";

export const DEV_SECRETS = {
  AGENT_TOKENS: "dev-agent-token",
  OPERATOR_TOKENS: "dev-operator-token",
  CALLBACK_SECRETS: "dev-callback-secret-0123456789abcdef0123456789abcdef",
  RESUME_SIGNING_SECRET: "whsec_ZGV2LXJlc3VtZS1zaWduaW5nLXNlY3JldC0wMTIzNDU2Nzg5",
} as const;

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;

/** True when a development secret is in use for a request that did not come over loopback. */
export function servesDevSecretsRemotely(config: Config, hostname: string): boolean {
  if (LOOPBACK.test(hostname)) return false;
  return (
    config.agentTokens.some((entry) => entry.token === DEV_SECRETS.AGENT_TOKENS) ||
    config.operatorTokens.includes(DEV_SECRETS.OPERATOR_TOKENS) ||
    config.callbackSecrets.includes(DEV_SECRETS.CALLBACK_SECRETS) ||
    config.resumeSigningSecret === DEV_SECRETS.RESUME_SIGNING_SECRET
  );
}
