// The Durable Object shell of one session: load the rows a rule needs → decide → persist (one
// transactionSync) → swap the in-memory core. The RPC surface and the timers are its subclasses'.

import { DurableObject } from "cloudflare:workers";
import type { AuditEvent } from "../domain/audit";
import { type Config, readConfig, resumeTargetsFor } from "../domain/config";
import type { Ctx, Decision, Effect } from "../domain/decision";
import { nextDueAt, withDueAttempt } from "../domain/delivery";
import { fail, type Result } from "../domain/errors";
import { type IndexEntry, indexEntryOf } from "../domain/index-entry";
import type { Session } from "../domain/state";
import { DEFAULT_TENANT } from "../domain/tenants";
import { type SessionView, sessionView } from "../domain/view";
import type { Env } from "../env";
import { PhysicalAlarm } from "./alarm";
import { AuditStore } from "./audit-store";
import { d1Writer, Indexer } from "./indexer";
import { meteredSql, type SqlMeter } from "./metered-sql";
import { hasSchema, migrate } from "./migrations";
import * as store from "./store";
import { Waiters } from "./waiters";

export const newId = (prefix: string): string =>
  `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
const ARM_AGAIN_MS = 5_000;

/** The core of a decided state: what stays in memory once its rows are written. */
const coreOf = (state: Session): Session =>
  state.messages.length === 0 &&
  Object.keys(state.jobs).length === 0 &&
  Object.keys(state.inbox).length === 0 &&
  Object.keys(state.purged).length === 0
    ? state
    : { ...state, messages: [], jobs: {}, inbox: {}, purged: {} };

export abstract class SessionShell extends DurableObject<Env> {
  protected core: Session | null = null;
  /** `oldestRetained` over all rows, kept because it only moves on a purge or from null. */
  protected retainedSince: number | null = null;
  protected readonly config: Config;
  protected readonly waiters = new Waiters();
  protected readonly audit: AuditStore;
  protected readonly physicalAlarm: PhysicalAlarm;
  protected readonly meter: SqlMeter = { rowsRead: 0, rowsWritten: 0 };
  protected readonly metered: { sql: SqlStorage; settle(): void };
  protected readonly indexer: Indexer;
  protected alarms = 0;
  protected runningTimers = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.config = readConfig(env);
    this.audit = new AuditStore(this.config);
    this.physicalAlarm = new PhysicalAlarm(ctx.storage);
    this.metered = meteredSql(ctx.storage.sql, this.meter);
    this.indexer = new Indexer({
      writer: env.INDEX === undefined || env.INDEX_UPDATES === "off" ? null : d1Writer(env.INDEX),
      entry: () => this.indexEntryNow(),
      waitUntil: (promise) => ctx.waitUntil(promise),
      retryScheduled: () => this.armAlarmInBackground(),
    });
    void ctx.blockConcurrencyWhile(async () => {
      // An id never created (or deleted) gets no schema: a 404 leaves no storage behind.
      if (!hasSchema(ctx.storage.sql)) return;
      // All-or-nothing: a migration that rebuilds a table must never stop half-way.
      ctx.storage.transactionSync(() => migrate(ctx.storage.sql));
      this.core = store.loadCore(this.sql);
      if (this.core === null) {
        // A schema without a session: deleted under revision 1, which kept the tables.
        await ctx.storage.deleteAll();
        return;
      }
      this.retainedSince = store.oldestRetained(this.sql);
      this.metered.settle();
      // What the index got before a restart is unknown: an update may have been lost with it.
      this.indexer.resend();
      await this.armAlarm(false);
    });
  }

  protected get sql(): SqlStorage {
    return this.metered.sql;
  }

  /** The settings the rules see: the resume targets are those of this session's tenant. */
  protected ctxAt(now: number): Ctx {
    const tenant = this.core?.tenant ?? DEFAULT_TENANT;
    return { now, config: { ...this.config, ...resumeTargetsFor(this.config, tenant) } };
  }

  /** Runs a read against storage and tallies the rows it read. */
  protected read<T>(query: (sql: SqlStorage) => T): T {
    try {
      return query(this.sql);
    } finally {
      this.metered.settle();
    }
  }

  /**
   * Persists a decision over the rows it was given and swaps the core in one synchronous block:
   * no await between them. `also` runs in the same transaction (SQL over rows not loaded), and
   * so do the audit events, so the trail never records a change that did not commit, or misses one.
   */
  protected commit<T>(
    loaded: Session | null,
    decision: Decision<T>,
    also?: (sql: SqlStorage) => boolean,
    events: (value: T, state: Session) => readonly AuditEvent[] = () => [],
  ): Result<T> & { effects?: readonly Effect[] } {
    // Outside the timer runner, a resume this decision creates due now is attempted in the same
    // commit: one transaction records the wake and its attempt, and the POST waits for that commit.
    const deliverHere = !this.runningTimers && this.config.misconfigured === null;
    const now = Date.now();
    const final = deliverHere
      ? withDueAttempt(loaded, decision, () => store.countPending(this.sql, now), this.ctxAt(now))
      : decision;
    if (!final.ok) return final;
    const recorded = final.state === null ? [] : events(final.value, final.state);
    const before = this.core;
    let moved = false;
    this.ctx.storage.transactionSync(() => {
      store.persistSession(this.sql, loaded, final.state);
      moved = also?.(this.sql) ?? false;
      for (const event of recorded) this.audit.append(this.sql, Date.now(), event);
    });
    this.core = final.state === null ? null : coreOf(final.state);
    if (this.core === null) this.retainedSince = null;
    else if (moved || this.retainedSince === null) {
      this.retainedSince = store.oldestRetained(this.sql);
    }
    this.metered.settle();
    this.indexer.changed();
    if ((this.core?.notifySeq ?? 0) !== (before?.notifySeq ?? 0)) this.waiters.wakeAll();
    // The alarm, armed for the attempt's deadline, stays the durable fallback: the attempt is
    // recorded before any POST, so a crash mid-delivery is retried after it.
    this.armAlarmInBackground();
    if (deliverHere && final.effects.length > 0) this.startDeliveries(final.effects);
    else if (!this.runningTimers && this.dueNow()) this.ctx.waitUntil(this.runDueTimers());
    return { ok: true, value: final.value, effects: deliverHere ? [] : final.effects };
  }

  /** Loads what `decide` reads on top of the core, decides, commits. */
  protected decide<T>(
    load: (core: Session, sql: SqlStorage, now: number) => Session,
    decide: (loaded: Session, now: number) => Decision<T>,
    events?: (value: T, state: Session) => readonly AuditEvent[],
  ): Result<T> {
    const core = this.core;
    if (core === null) return fail("not_found", "no such session");
    const now = Date.now();
    const loaded = this.read((sql) => load(core, sql, now));
    const result = this.commit(loaded, decide(loaded, now), undefined, events);
    return result.ok ? { ok: true, value: result.value } : result;
  }

  /** Claimable and leased items at `now` (a lapsed lease counts as pending). */
  protected unackedNow(session: Session, sql: SqlStorage): { pending: number; claimed: number } {
    const pending = store.countPending(sql, Date.now());
    return { pending, claimed: session.unacked - pending };
  }

  protected viewOf(session: Session | null): Result<SessionView> {
    if (session === null) return fail("not_found", "no such session");
    return {
      ok: true,
      value: this.read((sql) =>
        sessionView(session, { inbox: this.unackedNow(session, sql), jobs: store.countJobs(sql) }),
      ),
    };
  }

  protected nextDue(): number | null {
    return this.core === null
      ? null
      : nextDueAt(this.core, this.retainedSince, { config: this.config });
  }

  protected armAlarm(inAlarm: boolean, floorMs = 1): Promise<void> {
    // The index retry only arms the alarm: it is no timer of the session (see `dueNow`).
    const due = () => {
      const [session, index] = [this.nextDue(), this.indexer.retryAt];
      return session === null ? index : index === null ? session : Math.min(session, index);
    };
    return this.physicalAlarm.arm(due, inAlarm, floorMs);
  }

  protected armAlarmInBackground(): void {
    this.ctx.waitUntil(
      this.armAlarm(false).catch((error: unknown) => {
        // Retried already: keep trying while this object lives, since a session nobody touches
        // again (suspended on a dead runner) would otherwise lose its ceiling.
        console.error("setAlarm failed after retries; trying again in 5 s", error);
        setTimeout(() => this.armAlarmInBackground(), ARM_AGAIN_MS);
      }),
    );
  }

  /** Records an event that comes with no change of state, in its own transaction. */
  protected record(event: AuditEvent): void {
    this.ctx.storage.transactionSync(() => this.audit.append(this.sql, Date.now(), event));
    this.metered.settle();
  }

  /** The entry of the index (the inbox is counted only for a session that is listed). */
  protected indexEntryNow(): IndexEntry | null {
    const core = this.core;
    if (core === null) return null;
    const entry = indexEntryOf(core, 0, this.config);
    if (entry.attention === null) return entry;
    return indexEntryOf(
      core,
      this.read((sql) => store.countPending(sql, Date.now())),
      this.config,
    );
  }

  protected dueNow(): boolean {
    const due = this.nextDue();
    return due !== null && due <= Date.now();
  }

  /** Runs every due timer, delivering as it goes (SessionTimers). */
  protected abstract runDueTimers(): Promise<void>;

  /** Performs deliveries a commit already recorded as attempted, as the timer runner (SessionTimers). */
  protected abstract startDeliveries(effects: readonly Effect[]): void;
}
