// The Cloudflare-native wake: one call of `wake(resume)` on a service binding of this Worker, bounded
// by the webhook's own per-attempt deadline. When to call and what an outcome means is the domain's.
import type { ResumePayload } from "../domain/decision";
import { DELIVERY_TIMEOUT_MS } from "../domain/delivery";

/** A binding has no HTTP status: the audit trail records null and the error, as for a network error. */
type WakeOutcome =
  | { delivered: true; status: null }
  | { delivered: false; status: null; error: string };

/** What exec-inbox needs of the agent's entrypoint; it depends on no agent framework. */
interface WakeTarget {
  wake(resume: ResumePayload): unknown;
}

const targetOf = (env: object, binding: string): WakeTarget | null => {
  // Own properties only: a name like `constructor` must never reach a prototype's member.
  if (!Object.hasOwn(env, binding)) return null;
  const target: unknown = (env as Record<string, unknown>)[binding];
  if (target === null || (typeof target !== "object" && typeof target !== "function")) return null;
  // A service binding's RPC stub answers every method name with a callable stub, so this holds for
  // every service binding; a Durable Object namespace, D1 or a text var has no `wake`.
  return typeof (target as { wake?: unknown }).wake === "function" ? (target as WakeTarget) : null;
};

/** True when `binding` is a binding of `env` that can be woken. */
export const hasWake = (env: object, binding: string): boolean => targetOf(env, binding) !== null;

const TIMED_OUT = Symbol("timed out");

const messageOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).slice(0, 200);

/**
 * Calls `wake` once. A call that throws, rejects, or has not settled by the deadline is a failed
 * attempt; any value it resolves with is a delivery (the agent answers the wake by registering a
 * run, not by what it returns). A late settlement after the deadline is ignored: the attempt failed
 * and the retry carries the same resume_id, so the agent de-duplicates as it does a redelivery.
 */
export async function wakeBinding(
  env: object,
  binding: string,
  payload: ResumePayload,
): Promise<WakeOutcome> {
  const target = targetOf(env, binding);
  if (target === null) {
    return {
      delivered: false,
      status: null,
      error: `this deployment binds no service with wake() named ${binding}`,
    };
  }
  let timer: ReturnType<typeof setTimeout> | null = null;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), DELIVERY_TIMEOUT_MS);
  });
  try {
    const settled = await Promise.race([
      Promise.resolve().then(() => target.wake(payload)),
      deadline,
    ]);
    if (settled === TIMED_OUT) {
      return { delivered: false, status: null, error: `wake() on ${binding} timed out after 10 s` };
    }
    return { delivered: true, status: null };
  } catch (error) {
    return {
      delivered: false,
      status: null,
      error: `wake() on ${binding} threw (${messageOf(error)})`,
    };
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}
