// Reads the service configuration from the Worker's string bindings.
// Where the values come from (wrangler vars, secrets, --var) is left to the platform.
import { z } from "zod";
import { HEARTBEAT_TIMEOUT_MAX_MS, HEARTBEAT_TIMEOUT_MIN_MS } from "../../shared/exec-wire";
import { DEFAULT_QUOTAS, type Quotas, withOverrides } from "./quotas";
import { BINDING_NAME_PATTERN } from "./resume-binding";
import { isAllowlistEntry } from "./resume-url";
import {
  type AgentToken,
  DEFAULT_TENANT,
  parseAgentTokens,
  parseTenantSettings,
  type TenantSettings,
} from "./tenants";

export interface Config {
  readonly agentTokens: readonly AgentToken[];
  /** Why the settings cannot be served (a malformed AGENT_TOKENS or TENANT_SETTINGS); else null. */
  readonly misconfigured: string | null;
  /** Per-tenant resume targets from TENANT_SETTINGS; see `resumeTargetsFor` for the fallbacks. */
  readonly tenants: Readonly<Record<string, TenantSettings>>;
  /** OPERATOR_TOKENS: bearer tokens of /v1/ops/* and the console; no tenant, no agent route. */
  readonly operatorTokens: readonly string[];
  readonly callbackSecrets: readonly string[];
  readonly resumeSigningSecret: string | null;
  readonly resumeWebhookUrl: string | null;
  readonly resumeUrlAllowlist: readonly string[];
  /** RESUME_BINDING_ALLOWLIST: the service bindings a session may name as its resume_binding. */
  readonly resumeBindingAllowlist: readonly string[];
  /** RUNNER_URL_ALLOWLIST: the origins a session's runner (runner.url) may have. */
  readonly runnerUrlAllowlist: readonly string[];
  readonly publicBaseUrl: string | null;
  readonly waitCeilingMs: number;
  readonly jobRetentionMs: number;
  readonly resumeMaxAttempts: number;
  readonly resumeClaimTimeoutMs: number;
  readonly maxOutputBytes: number;
  /** MAX_FULL_OUTPUT_BYTES: the largest full output a completion may name (its parts in R2). */
  readonly maxFullOutputBytes: number;
  readonly auditMaxEvents: number;
  readonly auditRetentionMs: number;
  /** HEARTBEAT_TIMEOUT_MS: the liveness timeout of a reservation that names none (null: none). */
  readonly heartbeatTimeoutMs: number | null;
  /** The deployment's quotas (QUOTA_*, else DEFAULT_QUOTAS); a tenant's own: `quotasFor`. */
  readonly quotas: Quotas;
}

const DEFAULTS = {
  waitCeilingMs: 6 * 60 * 60 * 1000,
  jobRetentionMs: 24 * 60 * 60 * 1000,
  resumeMaxAttempts: 12,
  resumeClaimTimeoutMs: 10 * 60 * 1000,
  maxOutputBytes: 256 * 1024,
  maxFullOutputBytes: 1024 * 1024 * 1024,
  auditMaxEvents: 1000,
  auditRetentionMs: 7 * 24 * 60 * 60 * 1000,
} as const;

/** Every setting, by binding name (docs/api.md, Configuration). */
type SettingName =
  | "AGENT_TOKENS"
  | "OPERATOR_TOKENS"
  | "CALLBACK_SECRETS"
  | "RESUME_SIGNING_SECRET"
  | "RESUME_WEBHOOK_URL"
  | "RESUME_URL_ALLOWLIST"
  | "RESUME_BINDING_ALLOWLIST"
  | "RUNNER_URL_ALLOWLIST"
  | "PUBLIC_BASE_URL"
  | "WAIT_CEILING_MS"
  | "JOB_RETENTION_MS"
  | "RESUME_MAX_ATTEMPTS"
  | "RESUME_CLAIM_TIMEOUT_MS"
  | "MAX_OUTPUT_BYTES"
  | "MAX_FULL_OUTPUT_BYTES"
  | "AUDIT_MAX_EVENTS"
  | "AUDIT_RETENTION_MS"
  | "HEARTBEAT_TIMEOUT_MS"
  | "TENANT_SETTINGS"
  | "QUOTA_SESSIONS"
  | "QUOTA_RUNNING_JOBS"
  | "QUOTA_MESSAGE_BYTES"
  | "QUOTA_FULL_OUTPUT_BYTES"
  | "QUOTA_LONG_POLLS_PER_SESSION"
  | "QUOTA_LONG_POLLS_PER_TENANT";

/** The Worker's `Env` fits as it is: any binding may be missing, and a value is read as unknown. */
type Vars = { readonly [Name in SettingName]?: unknown };

// An empty value means unset, so `--var KEY:` clears a default.
function text(vars: Vars, key: SettingName): string | null {
  const value = vars[key];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

function list(vars: Vars, key: SettingName): string[] {
  return (text(vars, key) ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function positiveInt(vars: Vars, key: SettingName, fallback: number): number {
  const raw = text(vars, key);
  if (raw === null) return fallback;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/**
 * An allowlist entry that is not an origin (`hooks.example` without a scheme, a path) would
 * silently match nothing, and every resume_url would be refused: refuse to serve instead.
 */
function malformedAllowlist(
  global: { readonly resume: readonly string[]; readonly runner: readonly string[] },
  tenants: Readonly<Record<string, TenantSettings>>,
): string | null {
  const lists: Array<[string, readonly string[]]> = [
    ["RESUME_URL_ALLOWLIST", global.resume],
    ["RUNNER_URL_ALLOWLIST", global.runner],
    ...Object.entries(tenants).flatMap(
      ([tenant, own]): Array<[string, readonly string[]]> => [
        [`TENANT_SETTINGS.${tenant}.resume_url_allowlist`, own.resumeUrlAllowlist ?? []],
        [`TENANT_SETTINGS.${tenant}.runner_url_allowlist`, own.runnerUrlAllowlist ?? []],
      ],
    ),
  ];
  for (const [name, entries] of lists) {
    const position = entries.findIndex((entry) => !isAllowlistEntry(entry));
    if (position !== -1) {
      return `${name} entry ${position + 1} is not an origin (scheme://host, optional :port or :*)`;
    }
  }
  return null;
}

/** A binding allowlist entry that is no binding name could never be named: refuse to serve. */
function malformedBindingAllowlist(
  global: readonly string[],
  tenants: Readonly<Record<string, TenantSettings>>,
): string | null {
  const lists: Array<[string, readonly string[]]> = [
    ["RESUME_BINDING_ALLOWLIST", global],
    ...Object.entries(tenants).map(([tenant, own]): [string, readonly string[]] => [
      `TENANT_SETTINGS.${tenant}.resume_binding_allowlist`,
      own.resumeBindingAllowlist ?? [],
    ]),
  ];
  for (const [name, entries] of lists) {
    const position = entries.findIndex((entry) => !BINDING_NAME_PATTERN.test(entry));
    if (position !== -1) return `${name} entry ${position + 1} is not a binding name`;
  }
  return null;
}

/** A timeout out of the contract's range would make every reservation a 422: refuse to serve. */
function heartbeatTimeout(vars: Vars): { value: number | null; problem: string | null } {
  const raw = text(vars, "HEARTBEAT_TIMEOUT_MS");
  if (raw === null) return { value: null, problem: null };
  const value = Number(raw);
  return Number.isSafeInteger(value) &&
    value >= HEARTBEAT_TIMEOUT_MIN_MS &&
    value <= HEARTBEAT_TIMEOUT_MAX_MS
    ? { value, problem: null }
    : {
        value: null,
        problem: `HEARTBEAT_TIMEOUT_MS is ${raw}: it must be an integer from ${HEARTBEAT_TIMEOUT_MIN_MS} to ${HEARTBEAT_TIMEOUT_MAX_MS}`,
      };
}

/**
 * A default webhook that is no http(s) URL could never be sent, so a session would be shown a wake
 * that cannot come: refuse to serve, as for a tenant's own `resume_webhook_url` (tenants.ts).
 */
function malformedWebhookUrl(url: string | null): string | null {
  if (url === null || WEBHOOK_URL.safeParse(url).success) return null;
  return "RESUME_WEBHOOK_URL is not an http(s) URL";
}

const WEBHOOK_URL = z.url({ protocol: /^https?$/ });

/** One token in both lists would open agent and operator routes alike: refuse to serve. */
function sharedToken(agents: readonly AgentToken[], operators: readonly string[]): string | null {
  const agentTokens = new Set(agents.map((agent) => agent.token));
  const position = operators.findIndex((token) => agentTokens.has(token));
  return position === -1
    ? null
    : `OPERATOR_TOKENS entry ${position + 1} is also an agent token: operators need their own`;
}

export function readConfig(vars: Vars): Config {
  const agentTokens = parseAgentTokens(list(vars, "AGENT_TOKENS"));
  const tenants = parseTenantSettings(vars.TENANT_SETTINGS);
  const allowlist = list(vars, "RESUME_URL_ALLOWLIST");
  const runnerAllowlist = list(vars, "RUNNER_URL_ALLOWLIST");
  const heartbeat = heartbeatTimeout(vars);
  return {
    agentTokens: agentTokens.ok ? agentTokens.tokens : [],
    misconfigured: !agentTokens.ok
      ? agentTokens.reason
      : !tenants.ok
        ? tenants.reason
        : (sharedToken(agentTokens.tokens, list(vars, "OPERATOR_TOKENS")) ??
          malformedAllowlist({ resume: allowlist, runner: runnerAllowlist }, tenants.settings) ??
          malformedBindingAllowlist(list(vars, "RESUME_BINDING_ALLOWLIST"), tenants.settings) ??
          malformedWebhookUrl(text(vars, "RESUME_WEBHOOK_URL")) ??
          heartbeat.problem),
    tenants: tenants.ok ? tenants.settings : {},
    operatorTokens: list(vars, "OPERATOR_TOKENS"),
    callbackSecrets: list(vars, "CALLBACK_SECRETS"),
    resumeSigningSecret: text(vars, "RESUME_SIGNING_SECRET"),
    resumeWebhookUrl: text(vars, "RESUME_WEBHOOK_URL"),
    resumeUrlAllowlist: list(vars, "RESUME_URL_ALLOWLIST"),
    resumeBindingAllowlist: list(vars, "RESUME_BINDING_ALLOWLIST"),
    runnerUrlAllowlist: runnerAllowlist,
    publicBaseUrl: text(vars, "PUBLIC_BASE_URL"),
    waitCeilingMs: positiveInt(vars, "WAIT_CEILING_MS", DEFAULTS.waitCeilingMs),
    jobRetentionMs: positiveInt(vars, "JOB_RETENTION_MS", DEFAULTS.jobRetentionMs),
    resumeMaxAttempts: positiveInt(vars, "RESUME_MAX_ATTEMPTS", DEFAULTS.resumeMaxAttempts),
    resumeClaimTimeoutMs: positiveInt(
      vars,
      "RESUME_CLAIM_TIMEOUT_MS",
      DEFAULTS.resumeClaimTimeoutMs,
    ),
    maxOutputBytes: positiveInt(vars, "MAX_OUTPUT_BYTES", DEFAULTS.maxOutputBytes),
    maxFullOutputBytes: positiveInt(vars, "MAX_FULL_OUTPUT_BYTES", DEFAULTS.maxFullOutputBytes),
    auditMaxEvents: positiveInt(vars, "AUDIT_MAX_EVENTS", DEFAULTS.auditMaxEvents),
    auditRetentionMs: positiveInt(vars, "AUDIT_RETENTION_MS", DEFAULTS.auditRetentionMs),
    heartbeatTimeoutMs: heartbeat.value,
    quotas: {
      sessions: positiveInt(vars, "QUOTA_SESSIONS", DEFAULT_QUOTAS.sessions),
      runningJobs: positiveInt(vars, "QUOTA_RUNNING_JOBS", DEFAULT_QUOTAS.runningJobs),
      messageBytes: positiveInt(vars, "QUOTA_MESSAGE_BYTES", DEFAULT_QUOTAS.messageBytes),
      fullOutputBytes: positiveInt(vars, "QUOTA_FULL_OUTPUT_BYTES", DEFAULT_QUOTAS.fullOutputBytes),
      longPollsPerSession: positiveInt(
        vars,
        "QUOTA_LONG_POLLS_PER_SESSION",
        DEFAULT_QUOTAS.longPollsPerSession,
      ),
      longPollsPerTenant: positiveInt(
        vars,
        "QUOTA_LONG_POLLS_PER_TENANT",
        DEFAULT_QUOTAS.longPollsPerTenant,
      ),
    },
  };
}

/**
 * The resume targets of one tenant: its own where TENANT_SETTINGS names them. The allowlist falls
 * back to RESUME_URL_ALLOWLIST; RESUME_WEBHOOK_URL is the default tenant's host, so
 * another tenant's resumes never reach it — without its own URL such a resume waits as no_target.
 * RESUME_SIGNING_SECRET signs every tenant's webhooks.
 */
export function resumeTargetsFor(
  config: Config,
  tenant: string,
): Pick<
  Config,
  "resumeSigningSecret" | "resumeWebhookUrl" | "resumeUrlAllowlist" | "resumeBindingAllowlist"
> {
  const own = config.tenants[tenant];
  const fallbackUrl = tenant === DEFAULT_TENANT ? config.resumeWebhookUrl : null;
  return {
    resumeSigningSecret: config.resumeSigningSecret,
    resumeWebhookUrl: own?.resumeWebhookUrl ?? fallbackUrl,
    resumeUrlAllowlist: own?.resumeUrlAllowlist ?? config.resumeUrlAllowlist,
    resumeBindingAllowlist: own?.resumeBindingAllowlist ?? config.resumeBindingAllowlist,
  };
}

/** The origins a tenant's session may name as its runner: its own list, else RUNNER_URL_ALLOWLIST. */
export const runnerUrlAllowlistFor = (config: Config, tenant: string): readonly string[] =>
  config.tenants[tenant]?.runnerUrlAllowlist ?? config.runnerUrlAllowlist;

/** The liveness timeout of a tenant's reservations that name none: its own, else the global one. */
export function heartbeatTimeoutFor(config: Config, tenant: string): number | null {
  const own = config.tenants[tenant]?.heartbeatTimeoutMs;
  return own === undefined ? config.heartbeatTimeoutMs : own;
}

/** A tenant's quotas: its own from TENANT_SETTINGS where it names them, else the deployment's. */
export const quotasFor = (config: Pick<Config, "quotas" | "tenants">, tenant: string): Quotas =>
  withOverrides(config.quotas, config.tenants[tenant]?.quotas);
