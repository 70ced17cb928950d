// Sends one delivery of a resume — the signed webhook POST or the binding's `wake` — and returns
// its outcome with the audit record of the attempt. It counts what is on the wire: while one
// attempt is, the next one waits. What an outcome means is the domain's (`recordDeliveryRule`).

import { assertNever } from "../domain/assert-never";
import type { AuditEvent } from "../domain/audit";
import type { Effect, ResumePayload } from "../domain/decision";
import { DELIVERY_TIMEOUT_MS } from "../domain/delivery";
import type { Env } from "../env";
import { hasWake, wakeBinding } from "./resume-binding";
import { postResume } from "./resume-webhook";

/** What an attempt came to, by either kind of delivery (status: the HTTP status, null for a binding). */
export type DeliveryOutcome =
  | { delivered: true; status: number | null }
  | { delivered: false; status: number | null; error: string };

export class Courier {
  /** The resume POST; replaceable so a test can make one attempt throw. */
  post: typeof postResume = postResume;
  /** The binding wake; replaceable like `post`. */
  wake: (binding: string, payload: ResumePayload) => ReturnType<typeof wakeBinding>;
  /** Whether the env holds `binding` with a `wake` to call: one that does not can wake nothing. */
  readonly canWake: (binding: string) => boolean;
  /** Attempts on the wire now: while one is, no other starts (`Ctx.postOnWire`). */
  private onWire = 0;
  /** When the attempts on the wire must have ended (each is bounded by the delivery timeout). */
  private wireEnds = 0;

  constructor(
    env: Env,
    private readonly signingSecret: string | null,
  ) {
    this.wake = (binding, payload) => wakeBinding(env, binding, payload);
    this.canWake = (binding) => hasWake(env, binding);
  }

  get postOnWire(): boolean {
    return this.onWire > 0;
  }

  /** When every attempt on the wire must have ended. */
  get wireUntil(): number {
    return this.wireEnds;
  }

  /**
   * One attempt, counted as on the wire from this call until it settles. One wire for both kinds:
   * a wake on a binding holds back the next attempt as a POST does.
   */
  async send(effect: Effect): Promise<{ outcome: DeliveryOutcome; event: AuditEvent }> {
    const started = Date.now();
    this.wireEnds = Math.max(this.wireEnds, started + DELIVERY_TIMEOUT_MS);
    this.onWire += 1;
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.attempt(effect, started);
    } finally {
      this.onWire -= 1;
    }
    const event: AuditEvent = {
      type: "delivery",
      resume_id: effect.payload.resume_id,
      attempt: effect.attempt,
      status: outcome.status,
      error: outcome.delivered ? null : outcome.error,
      duration_ms: Date.now() - started,
      ...(effect.type === "wake_binding" ? { binding: effect.binding } : {}),
    };
    return { outcome, event };
  }

  private attempt(effect: Effect, started: number): Promise<DeliveryOutcome> {
    switch (effect.type) {
      case "deliver_resume":
        return this.post(effect.url, effect.payload, this.signingSecret, started);
      case "wake_binding":
        return this.wake(effect.binding, effect.payload);
      default:
        return assertNever(effect);
    }
  }
}
