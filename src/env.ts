// The Worker's bindings: the session namespace and the string settings of contract section 7.
import type { SessionObject } from "./session-object/session-object";

export interface Env {
  readonly SESSIONS: DurableObjectNamespace<SessionObject>;
  /** D1: the cross-session index of sessions that need attention (README "Operators: the index"). */
  readonly INDEX?: D1Database;
  /** `off` stops the session objects' index updates (the benchmark's baseline); anything else: on. */
  readonly INDEX_UPDATES?: string;
  readonly AGENT_TOKENS?: string;
  readonly OPERATOR_TOKENS?: string;
  readonly CALLBACK_SECRETS?: string;
  readonly RESUME_SIGNING_SECRET?: string;
  readonly RESUME_WEBHOOK_URL?: string;
  readonly RESUME_URL_ALLOWLIST?: string;
  readonly PUBLIC_BASE_URL?: string;
  readonly WAIT_CEILING_MS?: string;
  readonly JOB_RETENTION_MS?: string;
  readonly RESUME_MAX_ATTEMPTS?: string;
  readonly RESUME_CLAIM_TIMEOUT_MS?: string;
  readonly MAX_OUTPUT_BYTES?: string;
  readonly AUDIT_MAX_EVENTS?: string;
  readonly AUDIT_RETENTION_MS?: string;
  /** JSON text (`--var`) or a table (`[vars]`): per-tenant resume targets. */
  readonly TENANT_SETTINGS?: string | Record<string, unknown>;
}
