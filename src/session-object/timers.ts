// What follows a commit, and the session's timers: the after-commit step (index, long-polls, the
// alarm, deliveries, due timers), the one physical alarm running every due logical timer through
// the domain's tick, and the resume POSTs those decide. The rules themselves are the domain's.

import { assertNever } from "../domain/assert-never";
import type { AuditEvent } from "../domain/audit";
import type { Effect, Rule } from "../domain/decision";
import { recordDeliveryRule, tickRule } from "../domain/delivery";
import type { Result } from "../domain/errors";
import { type Committed, type Kernel, newId } from "./kernel";

/** What an attempt came to, by either kind of delivery (status: the HTTP status, null for a binding). */
type DeliveryOutcome =
  | { delivered: true; status: number | null }
  | { delivered: false; status: number | null; error: string };

const MAX_TIMER_ROUNDS = 64;
/** How often an object whose settings are refused checks again whether they were fixed. */
const PAUSED_RETRY_MS = 15_000;

/**
 * The after-commit step. Deliveries the commit recorded as attempted start in this turn, so the
 * output gate releases each POST with the commit that recorded it; the alarm, armed for the
 * attempt's deadline, stays the durable fallback. `thenDueTimers` runs what fell due meanwhile:
 * a request's commit asks for it, the timer loop runs its own rounds instead.
 */
export async function afterCommit(
  k: Kernel,
  committed: Pick<Committed<unknown>, "effects" | "notified">,
  thenDueTimers: boolean,
): Promise<void> {
  k.indexer.changed();
  if (committed.notified) k.waiters.wakeAll();
  k.armAlarmInBackground();
  try {
    for (const effect of committed.effects) await deliver(k, effect);
  } finally {
    // Also after a POST that threw: what it held back is due now.
    if (thenDueTimers && k.dueNow()) await runDueTimers(k);
  }
}

/** A request's command: executes it, leaves its after-commit step to run in the background. */
export function run<Cmd, T>(k: Kernel, rule: Rule<Cmd, T>, cmd: Cmd): Result<T> {
  const committed = k.execute(rule, cmd);
  if (!committed.ok) return committed;
  k.waitUntil(afterCommit(k, committed, true));
  return { ok: true, value: committed.value };
}

export async function alarm(k: Kernel): Promise<void> {
  k.alarmFired();
  // Deleting what outlived its rows is safe under any settings.
  await k.sweepOutputs();
  k.trimAudit();
  // Settings that HTTP refuses to serve must not steer deliveries either (a malformed
  // TENANT_SETTINGS would send a tenant's resumes to the global targets). Look again later:
  // nothing else would wake this object once the settings are fixed.
  if (k.config.misconfigured !== null) {
    console.error(`timers paused: ${k.config.misconfigured}`);
    await k.armAlarm(true, PAUSED_RETRY_MS);
    return;
  }
  await runDueTimers(k);
  await k.indexer.retryDue(Date.now(), k.indexKeys());
  // An attempt held back by a POST on the wire (a request's) is due when that POST must have
  // ended (`nextDue`); the step that started it runs the timers as soon as it does.
  await k.armAlarm(true);
}

/**
 * Runs every due timer, delivering as it goes. Two runners at once (the alarm and a request's
 * step) are safe: each round is one serialized tick, and an attempt on the wire is not due again
 * before it must have ended, so the second runner finds nothing to do. While another step's POST
 * is on the wire ceilings and retention still run; the next attempt is not due until that POST
 * ends, and the step whose POST it is runs the timers then.
 */
export async function runDueTimers(k: Kernel): Promise<void> {
  if (k.config.misconfigured !== null) return;
  for (let round = 0; round < MAX_TIMER_ROUNDS && k.dueNow(); round += 1) {
    const committed = k.execute(tickRule, { resumeId: newId("rs") });
    if (!committed.ok) return;
    await afterCommit(k, committed, false);
  }
}

async function deliver(k: Kernel, effect: Effect): Promise<void> {
  const started = Date.now();
  // One wire for both kinds: a wake on a binding holds back the next attempt as a POST does.
  const outcome = await k.posting((): Promise<DeliveryOutcome> => {
    switch (effect.type) {
      case "deliver_resume":
        return k.post(effect.url, effect.payload, k.config.resumeSigningSecret, started);
      case "wake_binding":
        return k.wake(effect.binding, effect.payload);
      default:
        return assertNever(effect);
    }
  });
  const event: AuditEvent = {
    type: "delivery",
    resume_id: effect.payload.resume_id,
    attempt: effect.attempt,
    status: outcome.status,
    error: outcome.delivered ? null : outcome.error,
    duration_ms: Date.now() - started,
    ...(effect.type === "wake_binding" ? { binding: effect.binding } : {}),
  };
  // The fetch let other requests in: the domain re-checks that this resume is still the one due.
  const committed = k.execute(recordDeliveryRule, {
    resumeId: effect.payload.resume_id,
    lifetime: effect.payload.lifetime,
    delivered: outcome.delivered,
    error: outcome.delivered ? null : outcome.error,
    random: Math.random(),
    event,
  });
  if (committed.ok) await afterCommit(k, committed, false);
}
