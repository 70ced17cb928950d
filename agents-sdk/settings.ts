// What the Agents SDK agent is given (its settings), what a wake comes to, and the small readings
// of exec-inbox's answers its turn loop shares. The loop itself is exec-inbox-agent.ts's.
import type { RunnerClient } from "@exec-inbox/ai-sdk/runner-client";
import { type Claim, type ExecInboxClient, ExecInboxError } from "@exec-inbox/client";
import type { LanguageModel, ModelMessage } from "ai";

export interface ExecInboxSettings {
  /** exec-inbox, usually over a service binding: `new ExecInboxClient({fetch: (r) => env.EXEC_INBOX.fetch(r), …})`. */
  readonly inbox: ExecInboxClient;
  readonly runner: RunnerClient;
  readonly model: LanguageModel;
  readonly system?: string;
  readonly maxSteps?: number;
  /** How long a claim holds the envelopes while the turn runs (default 60 s). */
  readonly leaseMs?: number;
  readonly heartbeatTimeoutMs?: number;
  /**
   * The exec-inbox tenant whose sessions this agent serves (default "default"). A binding allowed
   * for several tenants receives all their wakes; a wake for another tenant is inert ("foreign").
   */
  readonly tenant?: string;
  /** Model calls per turn before the turn is given up and the run ended (default 3). */
  readonly modelAttempts?: number;
  readonly log?: (line: string) => void;
}

/** What a wake came to; any answer is a delivery for exec-inbox (only a throw is retried). */
export type WakeAnswer =
  | { readonly taken: true; readonly runId: string }
  | {
      readonly taken: false;
      readonly reason: "duplicate" | "stale" | "busy" | "gone" | "foreign";
    };

/** suspend takes at most 64 handles: a wait on the first 64 (`all`) wakes when they end. */
export const MAX_WAIT_HANDLES = 64;

/** The model failed on every attempt: the run was ended, the human's turn not taken. */
export class ModelTurnError extends Error {
  constructor(sessionId: string, cause: unknown) {
    super(`session ${sessionId}: the model failed: ${String(cause)}`, { cause });
    this.name = "ModelTurnError";
  }
}

export const conflict = (error: unknown, code: string): boolean =>
  error instanceof ExecInboxError && error.problem.code === code;
export const gone = (error: unknown): boolean =>
  error instanceof ExecInboxError && (error.problem.status === 404 || error.problem.status === 410);

/** The handles an envelope ends for the model: completed, outcome unknown, wait expired. */
export const handlesOf = (claim: Claim): string[] => {
  const data = claim.envelope.body.data as { session_id?: string; handles?: string[] };
  return data.handles ?? (data.session_id === undefined ? [] : [data.session_id]);
};

/** The hidden runtime message as the model reads it, naming the envelope it came from. */
export const modelMessageOf = (claim: Claim): ModelMessage => ({
  role: "user",
  content: claim.provider_message.content,
  providerOptions: {
    execInbox: {
      id: claim.provider_message.id,
      hidden_from_ui: claim.provider_message.metadata.hidden_from_ui,
      runtime_kind: claim.provider_message.metadata.runtime_kind,
    },
  },
});
