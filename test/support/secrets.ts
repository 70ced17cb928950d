// The one place the tests' secrets are written: the workers pool's bindings (vitest.config.ts) are
// built from these names, and tests import them. Local `wrangler dev` secrets stay in
// .dev.vars.example (read with `devVar`); these are for tests only, never deployed.

export const AGENT_TOKEN = "test-agent-token";
/** A second token of the default tenant. */
export const SECOND_AGENT_TOKEN = "second-agent-token";
export const ACME_AGENT_TOKEN = "acme-agent-token";
export const GLOBEX_AGENT_TOKEN = "globex-agent-token";
/** Tenants whose quotas (vitest.config.ts) are small enough to reach in a test. */
export const QUOTA_AGENT_TOKEN = "quota-agent-token";
export const RATE_AGENT_TOKEN = "rate-agent-token";
export const OPERATOR_TOKEN = "test-operator-token";
/** The first signs new callback tokens; both verify (a rotation in progress). */
export const CALLBACK_SECRET_NEW = "test-callback-secret-new";
export const CALLBACK_SECRET_OLD = "test-callback-secret-old";
export const SIGNING_SECRET = "whsec_dGVzdC1yZXN1bWUtc2lnbmluZy1zZWNyZXQtMDEyMzQ1Njc4OQ==";
/** The bearer token of the runner processes the runner tests start. */
export const RUNNER_TOKEN = "test-runner-token";

/** The secret bindings of the workers pool. */
export const TEST_SECRETS = {
  AGENT_TOKENS: [
    AGENT_TOKEN,
    SECOND_AGENT_TOKEN,
    `acme:${ACME_AGENT_TOKEN}`,
    `globex:${GLOBEX_AGENT_TOKEN}`,
    `quota:${QUOTA_AGENT_TOKEN}`,
    `rate:${RATE_AGENT_TOKEN}`,
  ].join(","),
  OPERATOR_TOKENS: OPERATOR_TOKEN,
  CALLBACK_SECRETS: `${CALLBACK_SECRET_NEW},${CALLBACK_SECRET_OLD}`,
  RESUME_SIGNING_SECRET: SIGNING_SECRET,
} as const;
