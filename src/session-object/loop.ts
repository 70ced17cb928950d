// The loop of one session object, top to bottom: load the rows a rule needs → decide → commit
// (persist and swap the core) → schedule (index, long-polls, the alarm) → deliver → record each
// delivery's outcome as the next command, through the same loop. A request's command and the
// alarm's tick both go round it. Its parts (store, scheduler, courier, indexer) return values and
// never call back into it; the rules are the domain's.

import type { AuditEvent } from "../domain/audit";
import { type Config, quotasFor, readConfig, resumeTargetsFor } from "../domain/config";
import type { Core, Ctx, Decision, Effect, Loaded, Needs, Rule, Write } from "../domain/decision";
import { nextDueAt, recordDeliveryRule, tickRule, withDueAttempt } from "../domain/delivery";
import { fail, type Result } from "../domain/errors";
import { type IndexEntry, indexEntryOf } from "../domain/index-entry";
import { resumeNextAttemptAt, type Session } from "../domain/state";
import { DEFAULT_TENANT } from "../domain/tenants";
import { type WakeVia, wakePath } from "../domain/wake-path";
import type { Env } from "../env";
import { Courier } from "./courier";
import { d1Writer, Indexer, type IndexWork } from "./indexer";
import { OutputSweep } from "./output-sweep";
import { type AlarmContributor, Scheduler } from "./scheduler";
import { serviceUpSince } from "./service-clock";
import { Store } from "./store/store";
import { Waiters } from "./waiters";

export const newId = (prefix: string): string =>
  `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;

/** Rounds of due timers one runner takes before it leaves the rest to the next alarm. */
const MAX_TIMER_ROUNDS = 64;

/** A decision that committed: its reply, and what the steps after the commit have to do. */
export interface Committed<T> {
  readonly ok: true;
  readonly value: T;
  readonly effects: readonly Effect[];
  /** `notify_seq` moved: long-polls of the run answer now. */
  readonly notified: boolean;
  /** A purge left full outputs to sweep from R2. */
  readonly sweep: boolean;
}

const coreOf = (session: Session): Core => {
  const { messages: _m, jobs: _j, inbox: _i, purged: _p, finishedRuns: _f, ...core } = session;
  return core;
};

export class SessionLoop {
  /** The session's core, changed only by a commit, the load at start, and the end of a lifetime. */
  private current: Core | null = null;
  /** The last tenant's settings (`settingsOf`): derived from `config`, so never stale. */
  private settings: { tenant: string; config: Ctx["config"] } | null = null;
  readonly config: Config;
  readonly store: Store;
  readonly waiters = new Waiters();
  readonly courier: Courier;
  readonly indexer: Indexer;
  readonly sweep: OutputSweep;
  readonly scheduler: Scheduler;

  constructor(
    private readonly state: DurableObjectState,
    env: Env,
  ) {
    this.config = readConfig(env);
    this.store = new Store(state.storage, this.config);
    this.courier = new Courier(env, this.config.resumeSigningSecret);
    const index = env.INDEX === undefined || env.INDEX_UPDATES === "off" ? null : env.INDEX;
    this.indexer = new Indexer(index === null ? null : d1Writer(index), this.store);
    this.sweep = new OutputSweep(this.store, env.OUTPUTS);
    const timers: AlarmContributor = {
      nextAt: () => this.timersDueAt(),
      onAlarm: () => this.runDueTimers(),
    };
    const auditTrim: AlarmContributor = {
      // Deleting events no reader can see any more is safe under any settings.
      runsWhilePaused: true,
      nextAt: () => (this.current === null ? null : this.store.auditTrimDueAt(Date.now())),
      onAlarm: async () => {
        if (this.current !== null) this.store.trimAudit(Date.now());
      },
    };
    // The alarm's contributors, in the order it runs them; another is one more entry here.
    this.scheduler = new Scheduler(state, [this.sweep, auditTrim, timers, this.indexer]);
  }

  get core(): Core | null {
    return this.current;
  }

  /** The core as loaded at start, or none once a lifetime ended: the only swaps but a commit's. */
  adopt(core: Core | null): void {
    this.current = core;
  }

  /** The settings the rules see: the resume targets are those of this session's tenant. */
  ctxAt(now: number): Ctx {
    return {
      now,
      postOnWire: this.courier.postOnWire,
      serviceUpSince: serviceUpSince(),
      config: this.settingsOf(this.current?.tenant ?? DEFAULT_TENANT),
    };
  }

  /**
   * A tenant's settings as the rules see them, made once per object: they derive from the
   * object's config alone, which never changes while it lives (an object serves one tenant).
   */
  private settingsOf(tenant: string): Ctx["config"] {
    if (this.settings?.tenant !== tenant) {
      const config: Ctx["config"] = {
        ...this.config,
        ...resumeTargetsFor(this.config, tenant),
        quotas: quotasFor(this.config, tenant),
        deliveriesPaused: this.config.misconfigured !== null,
      };
      this.settings = { tenant, config };
    }
    return this.settings.config;
  }

  /** How a wake of `core` would reach its agent under the settings now (the view's `wake.via`). */
  wakeVia(core: Core): WakeVia {
    const targets = resumeTargetsFor(this.config, core.tenant);
    return wakePath(core, targets, this.courier.canWake);
  }

  /** The core with the rows `needs` names, for a rule or a read. */
  load(core: Core, needs: Needs, now: number): Loaded {
    const { session, overdue } = this.store.loadRows(core, needs, now);
    let pending: number | undefined;
    return {
      session,
      overdue,
      retainedSince: this.store.retained,
      pending: () => {
        if (needs.pending !== true)
          throw new Error("a rule read the pending count without needing it");
        pending ??= this.store.countPending(now);
        return pending;
      },
    };
  }

  /**
   * One command: loads the rows its rule needs, decides, folds the first attempt of a resume the
   * decision creates (so one transaction records the wake and its attempt), and commits.
   */
  execute<Cmd, T>(rule: Rule<Cmd, T>, cmd: Cmd): Committed<T> | Extract<Result<T>, { ok: false }> {
    const now = Date.now();
    const ctx = this.ctxAt(now);
    const core = this.current;
    let before: Session | null = null;
    let decision: Decision<T>;
    if (core === null) {
      decision = rule.absent?.(cmd, ctx) ?? fail("not_found", "no such session");
    } else {
      const loaded = this.load(core, rule.needs(core, cmd, now), now);
      before = loaded.session;
      decision = rule.decide(loaded, cmd, ctx);
    }
    const final = withDueAttempt(before, decision, () => this.store.countPending(now), ctx);
    if (!final.ok) {
      const refusal = core === null ? null : (rule.refused?.(cmd, final.code, core) ?? null);
      if (refusal !== null) {
        this.store.record(refusal);
        // No commit follows a refusal to arm the alarm: a flood of them must still get its trim.
        this.scheduler.armInBackground();
      }
      return final;
    }
    const events =
      before === null || final.state === null
        ? []
        : (rule.events?.(cmd, final.value, final.state, before) ?? []);
    const sweep = this.commit(final.state, final.writes, events);
    return {
      ok: true,
      value: final.value,
      effects: final.effects,
      notified: (this.current?.notifySeq ?? 0) !== (core?.notifySeq ?? 0),
      sweep,
    };
  }

  /**
   * Persists the next core, its writes and its audit events in one transaction, and swaps the core
   * in the same synchronous block: no await between them. Returns whether a purge left full
   * outputs to sweep.
   */
  private commit(next: Session | null, writes: readonly Write[], events: readonly AuditEvent[]) {
    const after = next === null ? null : coreOf(next);
    this.store.persist(this.current, after, writes, events);
    this.current = after;
    return this.store.committed(writes);
  }

  /** A request's command: executes it, leaves the steps after its commit to the background. */
  run<Cmd, T>(rule: Rule<Cmd, T>, cmd: Cmd): Result<T> {
    const committed = this.execute(rule, cmd);
    if (!committed.ok) return committed;
    this.state.waitUntil(this.afterCommit(committed, true));
    return { ok: true, value: committed.value };
  }

  /**
   * The steps after a commit, in order. Deliveries the commit recorded as attempted start in this
   * turn, so the output gate releases each POST with the commit that recorded it; the alarm, armed
   * for the attempt's deadline, stays the durable fallback. `thenDueTimers` runs what fell due
   * meanwhile: a request's commit asks for it, the timer loop runs its own rounds instead.
   */
  private async afterCommit(
    committed: Pick<Committed<unknown>, "effects" | "notified" | "sweep">,
    thenDueTimers: boolean,
  ): Promise<void> {
    this.keepAlive(this.indexer.changed(this.indexKeys()));
    if (committed.notified) this.waiters.wakeAll();
    if (committed.sweep) this.sweep.queued(Date.now());
    this.scheduler.armInBackground();
    try {
      for (const effect of committed.effects) await this.deliver(effect);
    } finally {
      // Also after a POST that threw: what it held back is due now.
      if (thenDueTimers && this.dueNow()) await this.runDueTimers();
    }
  }

  /** One delivery; its outcome goes round the loop as the next command. */
  private async deliver(effect: Effect): Promise<void> {
    const { outcome, event } = await this.courier.send(effect);
    // The fetch let other requests in: the domain re-checks that this resume is still the one due.
    const committed = this.execute(recordDeliveryRule, {
      resumeId: effect.payload.resume_id,
      lifetime: effect.payload.lifetime,
      delivered: outcome.delivered,
      error: outcome.delivered ? null : outcome.error,
      random: Math.random(),
      event,
    });
    if (committed.ok) await this.afterCommit(committed, false);
  }

  /**
   * The alarm: each contributor's due work (the output sweep, the session's timers, the index).
   * Settings that HTTP refuses to serve must not steer deliveries either (a malformed
   * TENANT_SETTINGS would send a tenant's resumes to the global targets): they pause the timers.
   */
  alarm(): Promise<void> {
    const paused = this.config.misconfigured;
    if (paused !== null) console.error(`timers paused: ${paused}`);
    return this.scheduler.fired(paused !== null);
  }

  /**
   * Runs every due timer, delivering as it goes. Two runners at once (the alarm and a request's
   * step) are safe: each round is one serialized tick, and an attempt on the wire is not due again
   * before it must have ended, so the second runner finds nothing to do. While another step's POST
   * is on the wire ceilings and retention still run; the next attempt is not due until that POST
   * ends, and the step whose POST it is runs the timers then.
   */
  private async runDueTimers(): Promise<void> {
    if (this.config.misconfigured !== null) return;
    for (let round = 0; round < MAX_TIMER_ROUNDS && this.dueNow(); round += 1) {
      const committed = this.execute(tickRule, { resumeId: newId("rs") });
      if (!committed.ok) return;
      await this.afterCommit(committed, false);
    }
  }

  /**
   * When the session's next timer can run: an attempt held back by a POST on the wire is due
   * once that POST must have ended (and not sooner than a second from now, so a POST a little
   * past its deadline cannot make the alarm spin); ceilings and retention keep their times.
   */
  private timersDueAt(): number | null {
    const core = this.current;
    if (core === null) return null;
    const postOnWire = this.courier.postOnWire;
    const runnable = nextDueAt(core, this.store.retained, { config: this.config, postOnWire });
    const attemptAt = postOnWire && core.resume !== null ? resumeNextAttemptAt(core.resume) : null;
    const held =
      attemptAt === null ? null : Math.max(attemptAt, this.courier.wireUntil, Date.now() + 1_000);
    return runnable === null ? held : held === null ? runnable : Math.min(runnable, held);
  }

  /** A timer that can run now is due: an attempt held back by a POST on the wire is not. */
  private dueNow(): boolean {
    const core = this.current;
    if (core === null) return false;
    const postOnWire = this.courier.postOnWire;
    const due = nextDueAt(core, this.store.retained, { config: this.config, postOnWire });
    return due !== null && due <= Date.now();
  }

  /** The index entry's status and times, without counting the inbox (the indexer counts it). */
  indexKeys(): IndexEntry | null {
    return this.current === null ? null : indexEntryOf(this.current, 0, this.config);
  }

  /** Keeps an indexer's work alive past the request, and arms the alarm again if it moved it. */
  keepAlive(work: IndexWork): void {
    if (work === null) return;
    this.state.waitUntil(
      work.then((moved) => {
        if (moved) this.scheduler.armInBackground();
      }),
    );
  }
}
