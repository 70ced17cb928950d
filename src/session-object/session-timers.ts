// The session's timers: the one physical alarm runs every due logical timer (ceilings, resume
// deliveries, retention) through the domain's tick, and performs the deliveries it decides.

import type { AuditEvent } from "../domain/audit";
import type { Effect } from "../domain/decision";
import { IN_FLIGHT_MARGIN_MS, recordDelivery, tick } from "../domain/delivery";
import { postResume } from "./resume-webhook";
import { newId, SessionShell } from "./session-shell";
import * as store from "./store";

const MAX_TIMER_ROUNDS = 64;
/** How often an object whose settings are refused checks again whether they were fixed. */
const PAUSED_RETRY_MS = 15_000;

export abstract class SessionTimers extends SessionShell {
  // ---- timers ----------------------------------------------------------------------------

  override async alarm(): Promise<void> {
    this.alarms += 1;
    this.physicalAlarm.forget();
    // Settings that HTTP refuses to serve must not steer deliveries either (a malformed
    // TENANT_SETTINGS would send a tenant's resumes to the global targets). Look again later:
    // nothing else would wake this object once the settings are fixed.
    if (this.config.misconfigured !== null) {
      console.error(`timers paused: ${this.config.misconfigured}`);
      await this.armAlarm(true, PAUSED_RETRY_MS);
      return;
    }
    // An attempt already on the wire (started by a request) owns the timers: this alarm must not
    // re-arm for "now" until that attempt has recorded its outcome, or it would spin.
    const attemptOnWire = this.runningTimers;
    await this.runDueTimers();
    await this.indexer.retryDue(Date.now());
    await this.armAlarm(true, attemptOnWire ? IN_FLIGHT_MARGIN_MS : 1);
  }

  /** Runs every due timer, delivering as it goes; one runner at a time (the alarm or a request's). */
  protected override async runDueTimers(): Promise<void> {
    if (this.runningTimers || this.config.misconfigured !== null) return;
    this.runningTimers = true;
    try {
      for (let round = 0; round < MAX_TIMER_ROUNDS && this.dueNow(); round += 1) {
        const core = this.core;
        if (core === null) break;
        const now = Date.now();
        const wait = core.wait;
        const input = this.read((sql) => ({
          loaded: { ...core, jobs: wait === null ? {} : store.loadJobs(sql, wait.handles, false) },
          pending: store.countPending(sql, now),
        }));
        const decision = tick(
          input.loaded,
          { resumeId: newId("rs"), pending: input.pending, retainedSince: this.retainedSince },
          this.ctxAt(now),
        );
        const purgeBefore = decision.ok ? decision.value.purgeBefore : null;
        const result = this.commit(
          input.loaded,
          decision,
          (sql) => {
            if (purgeBefore === null) return false;
            store.purgeBefore(sql, purgeBefore, now);
            return true;
          },
          // Only a ceiling clears a wait in a tick.
          (_, state) =>
            wait !== null && state.wait === null
              ? [{ type: "ceiling", handles: wait.handles }]
              : [],
        );
        for (const effect of (result.ok && result.effects) || []) await this.deliver(effect);
      }
    } finally {
      this.runningTimers = false;
    }
  }

  protected override startDeliveries(effects: readonly Effect[]): void {
    // Called right after the commit that recorded the attempts: the POST starts in the same turn,
    // so the output gate releases it with that commit.
    this.runningTimers = true;
    const run = async () => {
      try {
        for (const effect of effects) await this.deliver(effect);
      } finally {
        this.runningTimers = false;
      }
      await this.runDueTimers();
    };
    this.ctx.waitUntil(run());
  }

  protected async deliver(effect: Effect): Promise<void> {
    const started = Date.now();
    const outcome = await postResume(
      effect.url,
      effect.payload,
      this.config.resumeSigningSecret,
      started,
    );
    const attempt: AuditEvent = {
      type: "delivery",
      resume_id: effect.payload.resume_id,
      attempt: effect.attempt,
      status: outcome.status,
      error: outcome.delivered ? null : outcome.error,
      duration_ms: Date.now() - started,
    };
    // The fetch let other requests in: the domain re-checks that this resume is still the one due.
    const core = this.core;
    if (core === null) return;
    this.commit(
      core,
      recordDelivery(
        core,
        {
          resumeId: effect.payload.resume_id,
          delivered: outcome.delivered,
          error: outcome.delivered ? null : outcome.error,
          random: Math.random(),
        },
        this.ctxAt(Date.now()),
      ),
      undefined,
      () => [attempt],
    );
  }
}
