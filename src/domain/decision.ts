// The shape every domain rule returns: the next state, effects for the shell, and the reply.
// Performing effects (fetch, alarms, waking pollers) is left to the Durable Object shell.
import type { Failure } from "./errors";
import type { ResumeReason, Session } from "./state";

export interface Ctx {
  readonly now: number;
  readonly config: {
    readonly waitCeilingMs: number;
    readonly jobRetentionMs: number;
    readonly resumeMaxAttempts: number;
    readonly resumeClaimTimeoutMs: number;
    readonly resumeWebhookUrl: string | null;
    /** Checked again at every attempt: removing an origin stops deliveries to it. */
    readonly resumeUrlAllowlist: readonly string[];
  };
}

export interface ResumePayload {
  readonly type: "session.resume";
  readonly tenant: string;
  readonly session_id: string;
  readonly lifetime: string;
  readonly resume_id: string;
  readonly reason: ResumeReason;
  readonly inbox: { readonly pending: number };
}

export type Effect = {
  readonly type: "deliver_resume";
  readonly url: string;
  readonly payload: ResumePayload;
  readonly attempt: number;
};

export type Decision<T> =
  | {
      readonly ok: true;
      readonly state: Session | null;
      readonly value: T;
      readonly effects: readonly Effect[];
    }
  | Failure;

export const decided = <T>(
  state: Session | null,
  value: T,
  effects: readonly Effect[] = [],
): Decision<T> => ({ ok: true, state, value, effects });
