// What the lockstep compares: answers of the model and the object reduced to outcomes, and the
// coverage counts of a run. Which commands produce them is left to the Lockstep.

import type { messageView } from "../../src/domain/view";
import type { SessionObject } from "../../src/session-object/session-object";
import type { Step } from "./history";
import { HANDLES } from "./lockstep-commands";

/**
 * The object's RPC surface with plain return types (the stub's Rpc types add nothing here); the
 * runtime's own handlers (the alarm and the WebSocket events) are not callable on a stub.
 */
type Handler = "alarm" | "webSocketMessage" | "webSocketClose" | "webSocketError";
type Method = (...args: never[]) => unknown;
export type ObjectApi = {
  [K in keyof SessionObject as K extends Handler
    ? never
    : SessionObject[K] extends Method
      ? K
      : never]: SessionObject[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

export type Outcome = { ok: true; value?: unknown } | { ok: false; code: string };

export const failed = (code: string): Outcome => ({ ok: false, code });

/** A domain result or decision, or an RPC answer, as an outcome (a thrown error is one too). */
export function outcome<T>(
  result: { ok: true; value: T } | { ok: false; code: string },
  shape: (value: T) => unknown = () => undefined,
): Outcome {
  if (!result.ok) return failed(result.code);
  const value = shape(result.value);
  return value === undefined ? { ok: true } : { ok: true, value };
}

export async function attempt<T>(
  run: () => Promise<{ ok: true; value: T } | { ok: false; code: string }>,
): Promise<{ ok: true; value: T } | { ok: false; code: string }> {
  try {
    return await run();
  } catch (error) {
    return { ok: false, code: `threw: ${error instanceof Error ? error.message : String(error)}` };
  }
}

export interface Token {
  readonly seq: number;
  readonly token: string;
}

export type Side = "model" | "real";

/** The states of a resume that `isResumePending` counts: the session is `resuming`. */
export const PENDING_RESUME_STATES = new Set<string>(["scheduled", "delivered", "no_target"]);

/** Counts of the situations the run reached, so a test can tell its generator covers them. */
export const coverage = new Map<string, number>();
export const cover = (what: string) => coverage.set(what, (coverage.get(what) ?? 0) + 1);

export function stepOutcome(step: Step): Outcome {
  return step.ok ? { ok: true } : failed(step.code ?? "unknown");
}

export function notFoundEverywhere() {
  const missing = failed("not_found");
  return {
    view: missing,
    inbox: missing,
    messages: missing,
    jobs: missing,
    pulls: Object.fromEntries(HANDLES.map((h) => [h, missing])),
  };
}

export function messageShape(message: ReturnType<typeof messageView>) {
  const { created_at: _created, ...rest } = message;
  return rest;
}
