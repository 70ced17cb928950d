// Tenants: AGENT_TOKENS entries `tenant:token` or a bare `token` (tenant `default`),
// and the Durable Object name that scopes a session id to its tenant.
// Comparing a presented token in constant time is left to src/auth/agent-token.ts.

import { z } from "zod";
import { heartbeatTimeoutMs } from "../../shared/exec-wire";
import type { QuotaOverrides } from "./quotas";

export const DEFAULT_TENANT = "default";
export const TENANT_PATTERN = /^[a-z0-9-]{1,64}$/;

export interface AgentToken {
  readonly tenant: string;
  readonly token: string;
}

type ParsedAgentTokens =
  | { readonly ok: true; readonly tokens: readonly AgentToken[] }
  | { readonly ok: false; readonly reason: string };

/**
 * A `:` always separates a tenant: a bare token must not contain one. Misconfigured entries are
 * refused as a whole rather than guessed at, since a guess could move a host into another tenant.
 * The reason names the entry's position, never the token.
 */
export function parseAgentTokens(entries: readonly string[]): ParsedAgentTokens {
  const tokens: AgentToken[] = [];
  const tenantOfToken = new Map<string, string>();
  for (const [position, entry] of entries.entries()) {
    const colon = entry.indexOf(":");
    const tenant = colon === -1 ? DEFAULT_TENANT : entry.slice(0, colon);
    const token = colon === -1 ? entry : entry.slice(colon + 1);
    const where = `AGENT_TOKENS entry ${position + 1}`;
    if (!TENANT_PATTERN.test(tenant)) {
      return { ok: false, reason: `${where}: a tenant name is 1-64 chars of [a-z0-9-]` };
    }
    if (token === "") return { ok: false, reason: `${where}: the token is empty` };
    // `Bearer <token>` cannot carry whitespace: such an entry (e.g. `acme: tok`) could never match.
    if (/\s/.test(token)) return { ok: false, reason: `${where}: the token contains whitespace` };
    const owner = tenantOfToken.get(token);
    if (owner !== undefined && owner !== tenant) {
      return { ok: false, reason: `${where}: the same token is listed for two tenants` };
    }
    tenantOfToken.set(token, tenant);
    tokens.push({ tenant, token });
  }
  return { ok: true, tokens };
}

/**
 * The object `/healthz/object` pings. `_probe` is no tenant name and `/` is in no session id, so no
 * session can ever live in it.
 */
export const HEALTH_OBJECT_NAME = "_probe/healthz";

/**
 * The object name of a session. The default tenant keeps the bare id, so sessions created before
 * tenants existed stay where they are; `/` is outside the id charset, so no two names collide.
 */
export const sessionObjectName = (tenant: string, sessionId: string): string =>
  tenant === DEFAULT_TENANT ? sessionId : `${tenant}/${sessionId}`;

/** What a tenant may set apart from the globals (per-tenant resume targets). */
export interface TenantSettings {
  readonly resumeUrlAllowlist?: readonly string[];
  readonly resumeWebhookUrl?: string;
  /** Replaces RESUME_BINDING_ALLOWLIST for this tenant (an empty list: no binding at all). */
  readonly resumeBindingAllowlist?: readonly string[];
  /** Replaces RUNNER_URL_ALLOWLIST for this tenant (an empty list: no runner at all). */
  readonly runnerUrlAllowlist?: readonly string[];
  /** The tenant's HEARTBEAT_TIMEOUT_MS; null turns the global one off for it. */
  readonly heartbeatTimeoutMs?: number | null;
  /** The tenant's own quotas over the deployment's (QUOTA_*); null: no limit for it. */
  readonly quotas?: QuotaOverrides;
  /** false: the tenant's tokens skip the rate-limiting binding (a tenant the deployment trusts). */
  readonly rateLimited?: boolean;
}

// A quota is a positive integer, or null for none (a tenant the deployment trusts).
const quotaValue = z.number().int().positive().nullable().optional();

const tenantSettingsSchema = z.record(
  z.string().regex(TENANT_PATTERN),
  z.strictObject({
    resume_url_allowlist: z.array(z.string().min(1)).optional(),
    resume_webhook_url: z.url({ protocol: /^https?$/ }).optional(),
    resume_binding_allowlist: z.array(z.string().min(1)).optional(),
    runner_url_allowlist: z.array(z.string().min(1)).optional(),
    // null: this tenant's jobs have no liveness check unless a reservation names one.
    heartbeat_timeout_ms: heartbeatTimeoutMs.nullable().optional(),
    quotas: z
      .strictObject({
        sessions: quotaValue,
        running_jobs: quotaValue,
        message_bytes: quotaValue,
        full_output_bytes: quotaValue,
        long_polls_per_session: quotaValue,
        long_polls_per_tenant: quotaValue,
      })
      .optional(),
    rate_limited: z.boolean().optional(),
  }),
);

type ParsedTenantSettings =
  | { readonly ok: true; readonly settings: Readonly<Record<string, TenantSettings>> }
  | { readonly ok: false; readonly reason: string };

/**
 * TENANT_SETTINGS: a JSON object keyed by tenant, e.g.
 * `{"acme": {"resume_url_allowlist": ["https://hooks.acme.example"], "resume_webhook_url": "…"}}`.
 * wrangler passes a `[vars]` table as an object and `--var` as text; both are accepted.
 */
export function parseTenantSettings(raw: unknown): ParsedTenantSettings {
  if (raw === undefined || raw === null || (typeof raw === "string" && raw.trim() === "")) {
    return { ok: true, settings: {} };
  }
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return { ok: false, reason: "TENANT_SETTINGS is not valid JSON" };
    }
  }
  const parsed = tenantSettingsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: `TENANT_SETTINGS: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    };
  }
  const settings: Record<string, TenantSettings> = {};
  for (const [tenant, entry] of Object.entries(parsed.data)) {
    settings[tenant] = {
      ...(entry.resume_url_allowlist === undefined
        ? {}
        : { resumeUrlAllowlist: entry.resume_url_allowlist }),
      ...(entry.resume_webhook_url === undefined
        ? {}
        : { resumeWebhookUrl: entry.resume_webhook_url }),
      ...(entry.resume_binding_allowlist === undefined
        ? {}
        : { resumeBindingAllowlist: entry.resume_binding_allowlist }),
      ...(entry.runner_url_allowlist === undefined
        ? {}
        : { runnerUrlAllowlist: entry.runner_url_allowlist }),
      ...(entry.heartbeat_timeout_ms === undefined
        ? {}
        : { heartbeatTimeoutMs: entry.heartbeat_timeout_ms }),
      ...(entry.quotas === undefined ? {} : { quotas: quotaOverrides(entry.quotas) }),
      ...(entry.rate_limited === undefined ? {} : { rateLimited: entry.rate_limited }),
    };
  }
  return { ok: true, settings };
}

/** The wire's snake_case quota keys as the domain's; absent keys stay absent. */
function quotaOverrides(raw: {
  sessions?: number | null | undefined;
  running_jobs?: number | null | undefined;
  message_bytes?: number | null | undefined;
  full_output_bytes?: number | null | undefined;
  long_polls_per_session?: number | null | undefined;
  long_polls_per_tenant?: number | null | undefined;
}): QuotaOverrides {
  const entries: [keyof QuotaOverrides, number | null | undefined][] = [
    ["sessions", raw.sessions],
    ["runningJobs", raw.running_jobs],
    ["messageBytes", raw.message_bytes],
    ["fullOutputBytes", raw.full_output_bytes],
    ["longPollsPerSession", raw.long_polls_per_session],
    ["longPollsPerTenant", raw.long_polls_per_tenant],
  ];
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
}
