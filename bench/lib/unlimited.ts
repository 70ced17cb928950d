// The benchmarks measure what the service costs, not its brakes: under `wrangler dev` they run the
// default tenant without the rate limit per token (wrangler.toml's TOKEN_RATE_LIMITER, 1,000
// requests per 10 s), which a stress run of 16 parallel appends would pass (docs/tenants.md, "Rate limits").
export const UNLIMITED_VARS = {
  TENANT_SETTINGS: JSON.stringify({ default: { rate_limited: false } }),
} as const;
