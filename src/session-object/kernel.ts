// The kernel of one session object: the in-memory core, reads, and `execute` — load the rows a
// rule needs → decide → fold the first delivery attempt → commit (persist and swap in one block).
// What follows a commit (index, long-polls, alarm, deliveries, due timers) is left to timers.ts.

import type { AuditEvent } from "../domain/audit";
import { type Config, quotasFor, readConfig, resumeTargetsFor } from "../domain/config";
import type {
  Core,
  Ctx,
  Decision,
  Effect,
  Loaded,
  Needs,
  ResumePayload,
  Rule,
  Write,
} from "../domain/decision";
import { DELIVERY_TIMEOUT_MS, nextDueAt, withDueAttempt } from "../domain/delivery";
import { fail, type Result } from "../domain/errors";
import { lifetimePrefix } from "../domain/full-output";
import { type IndexEntry, indexEntryOf } from "../domain/index-entry";
import { resumeNextAttemptAt, type Session } from "../domain/state";
import { DEFAULT_TENANT } from "../domain/tenants";
import type { Env } from "../env";
import { PhysicalAlarm } from "./alarm";
import { AuditTrail } from "./audit-trail";
import { d1Writer, Indexer } from "./indexer";
import { meteredSql, type SqlMeter } from "./metered-sql";
import { hasSchema, migrate } from "./migrations";
import {
  keepPrefixes,
  prefixesToKeep,
  SWEEP_PAUSE_MS,
  sweepBatches,
  sweepPending,
} from "./output-sweep";
import { wakeBinding } from "./resume-binding";
import { postResume } from "./resume-webhook";
import { serviceUpSince } from "./service-clock";
import * as store from "./store";
import { Waiters } from "./waiters";

export const newId = (prefix: string): string =>
  `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
const ARM_AGAIN_MS = 5_000;
/** After a failed sweep of full outputs (R2 unreachable): the next try. */
const SWEEP_RETRY_MS = 30_000;

/** A decision that committed: its reply, and what the after-commit step has to do. */
export interface Committed<T> {
  readonly ok: true;
  readonly value: T;
  readonly effects: readonly Effect[];
  /** `notify_seq` moved: long-polls of the run answer now. */
  readonly notified: boolean;
}

const coreOf = (session: Session): Core => {
  const { messages: _m, jobs: _j, inbox: _i, purged: _p, finishedRuns: _f, ...core } = session;
  return core;
};

/** `retainedSince` after the writes: a purge reads it again, a completion or an ack can lower it. */
function retainedAfter(
  retained: number | null,
  writes: readonly Write[],
): number | null | "read again" {
  let next = retained;
  for (const write of writes) {
    const time =
      write.type === "complete_job"
        ? write.job.completedAt
        : write.type === "mark_acked"
          ? write.ackedAt
          : null;
    if (write.type === "purge_before") return "read again";
    if (time !== null) next = next === null ? time : Math.min(next, time);
  }
  return next;
}

export class Kernel {
  private current: Core | null = null;
  /** `oldestRetained` over all rows: it moves only by the writes above, so it is kept, not read. */
  private retained: number | null = null;
  readonly config: Config;
  readonly waiters = new Waiters();
  readonly audit: AuditTrail;
  readonly physicalAlarm: PhysicalAlarm;
  readonly indexer: Indexer;
  readonly meter: SqlMeter = { rowsRead: 0, rowsWritten: 0, statements: new Set() };
  /** The resume POST; replaceable so a test can make one attempt throw. */
  post: typeof postResume = postResume;
  /** The binding wake; replaceable like `post`. */
  wake: (binding: string, payload: ResumePayload) => ReturnType<typeof wakeBinding>;
  /** Alarm invocations since this object started (for its stats). */
  private alarms = 0;
  /** Resume POSTs on the wire now: while one is, no other attempt starts (`Ctx.postOnWire`). */
  private posts = 0;
  /** When the POSTs on the wire must have ended (each is bounded by the delivery timeout). */
  private wireUntil = 0;
  private readonly metered: { sql: SqlStorage; settle(): void };
  /** Where full outputs live (wrangler.toml `OUTPUTS`); absent, no part can be uploaded. */
  readonly bucket: R2Bucket | undefined;
  /** When the alarm next sweeps full outputs that outlived their rows (output-sweep.ts). */
  private sweepDueAt: number | null = null;
  /** The sessions quota's count (tenant-places.ts); absent, nothing is counted. */
  readonly tenantSessions: D1Database | undefined;
  private lifecycle: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly state: DurableObjectState,
    env: Env,
  ) {
    this.config = readConfig(env);
    this.bucket = env.OUTPUTS;
    this.tenantSessions = env.INDEX;
    this.wake = (binding, payload) => wakeBinding(env, binding, payload);
    this.audit = new AuditTrail(this.config);
    this.physicalAlarm = new PhysicalAlarm(state.storage);
    this.metered = meteredSql(state.storage.sql, this.meter);
    this.indexer = new Indexer({
      writer: env.INDEX === undefined || env.INDEX_UPDATES === "off" ? null : d1Writer(env.INDEX),
      entry: () => this.indexEntryNow(),
      waitUntil: (promise) => state.waitUntil(promise),
      rearm: () => this.armAlarmInBackground(),
    });
  }

  /** Loads the core at object start; run inside `blockConcurrencyWhile`. */
  async start(): Promise<void> {
    serviceUpSince();
    const { storage } = this.state;
    // An id never created (or deleted) gets no schema: a 404 leaves no storage behind. A deleted
    // session may still have full outputs to sweep: the alarm goes on with them.
    if (!hasSchema(this.sql)) {
      if (sweepPending(this.sql)) {
        this.sweepDueAt = Date.now();
        await this.armAlarm(false);
      }
      return;
    }
    // All-or-nothing: a migration that rebuilds a table must never stop half-way.
    storage.transactionSync(() => migrate(this.sql));
    this.current = store.loadCore(this.sql);
    if (this.current === null) {
      // A schema without a session: deleted under revision 1, which kept the tables.
      await storage.deleteAll();
      return;
    }
    this.retained = store.oldestRetained(this.sql);
    if (sweepPending(this.sql)) this.sweepDueAt = Date.now();
    this.metered.settle();
    // What the index got before a restart is unknown: an update may have been lost with it.
    this.indexer.resend();
    await this.armAlarm(false);
  }

  get core(): Core | null {
    return this.current;
  }

  private get sql(): SqlStorage {
    return this.metered.sql;
  }

  waitUntil(promise: Promise<unknown>): void {
    this.state.waitUntil(promise);
  }

  /** The settings the rules see: the resume targets are those of this session's tenant. */
  ctxAt(now: number): Ctx {
    const tenant = this.current?.tenant ?? DEFAULT_TENANT;
    return {
      now,
      postOnWire: this.posts > 0,
      serviceUpSince: serviceUpSince(),
      config: {
        ...this.config,
        ...resumeTargetsFor(this.config, tenant),
        quotas: quotasFor(this.config, tenant),
        deliveriesPaused: this.config.misconfigured !== null,
      },
    };
  }

  get postOnWire(): boolean {
    return this.posts > 0;
  }

  /** Runs one resume POST, counted as on the wire from this call until it settles. */
  async posting<T>(post: () => Promise<T>): Promise<T> {
    this.wireUntil = Math.max(this.wireUntil, Date.now() + DELIVERY_TIMEOUT_MS);
    this.posts += 1;
    try {
      return await post();
    } finally {
      this.posts -= 1;
    }
  }

  /** Runs a read against storage and tallies the rows it read. */
  read<T>(query: (sql: SqlStorage) => T): T {
    try {
      return query(this.sql);
    } finally {
      this.metered.settle();
    }
  }

  /** The core with the rows `needs` names, for a rule or a read. */
  load(core: Core, needs: Needs, now: number): Loaded {
    const { session, overdue } = this.read((sql) => store.loadRows(sql, core, needs, now));
    let pending: number | undefined;
    return {
      session,
      overdue,
      retainedSince: this.retained,
      pending: () => {
        if (needs.pending !== true)
          throw new Error("a rule read the pending count without needing it");
        pending ??= this.read((sql) => store.countPending(sql, now));
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
    const final = withDueAttempt(
      before,
      decision,
      () => this.read((sql) => store.countPending(sql, now)),
      ctx,
    );
    if (!final.ok) {
      const refusal = core === null ? null : (rule.refused?.(cmd, final.code, core) ?? null);
      if (refusal !== null) this.record(refusal);
      return final;
    }
    const events =
      before === null || final.state === null
        ? []
        : (rule.events?.(cmd, final.value, final.state, before) ?? []);
    this.commit(final.state, final.writes, events);
    return {
      ok: true,
      value: final.value,
      effects: final.effects,
      notified: (this.current?.notifySeq ?? 0) !== (core?.notifySeq ?? 0),
    };
  }

  /**
   * Persists the next core and the writes, with the audit events, in one transaction, and swaps
   * the core in the same synchronous block: no await between them, and the trail never records a
   * change that did not commit, or misses one.
   */
  private commit(
    next: Session | null,
    writes: readonly Write[],
    events: readonly AuditEvent[],
  ): void {
    const before = this.current;
    const after = next === null ? null : coreOf(next);
    try {
      this.state.storage.transactionSync(() => {
        for (const event of events) this.audit.append(this.sql, Date.now(), event);
        if (after !== null) store.writeCore(this.sql, before, after);
        for (const write of writes) store.applyWrite(this.sql, write);
      });
    } catch (error) {
      // Rolled back: the trail's counters may be ahead of what committed.
      this.audit.reload();
      throw error;
    }
    this.current = after;
    const retained = retainedAfter(this.retained, writes);
    this.retained = retained === "read again" ? store.oldestRetained(this.sql) : retained;
    // A purge may have left parts to sweep from R2.
    if (retained === "read again" && this.sweepDueAt === null && sweepPending(this.sql)) {
      this.sweepDueAt = Date.now();
    }
    this.metered.settle();
  }

  /** Records an event that comes with no change of state, in its own transaction. */
  record(event: AuditEvent): void {
    try {
      this.state.storage.transactionSync(() => this.audit.append(this.sql, Date.now(), event));
    } catch (error) {
      this.audit.reload();
      throw error;
    }
    this.metered.settle();
    // No commit follows a refusal to arm the alarm: a flood of them must still get its trim.
    this.armAlarmInBackground();
  }

  /** One bounded batch of the audit trail's deletes (its cap and retention), when one is due. */
  trimAudit(): void {
    if (this.current === null) return;
    const trim = this.read((sql) => this.audit.trimWrite(sql, Date.now()));
    if (trim === null) return;
    this.state.storage.transactionSync(() => store.applyWrite(this.sql, trim));
    this.audit.reload();
    this.metered.settle();
  }

  /** The schema a new lifetime's rows go into (a deleted session has none). */
  ensureSchema(): void {
    this.state.storage.transactionSync(() => migrate(this.sql));
  }

  /**
   * Runs creates and deletes one at a time. Each changes the count in D1 and this object's storage
   * with an await between them, and the input gate does not hold across a D1 call: without a turn,
   * a delete answered 404 in that gap would give back the place of the create it raced.
   */
  oneLifecycleChange<T>(change: () => Promise<T>): Promise<T> {
    const turn = this.lifecycle.then(change);
    this.lifecycle = turn.catch(() => undefined);
    return turn;
  }

  /** Ends the lifetime: every row, the schema and the alarm go; the next create starts afresh. */
  async wipe(): Promise<void> {
    const core = this.current;
    // The lifetime is fenced at once (no core); its full outputs go from the alarm, in batches.
    const sweeps =
      core === null
        ? []
        : prefixesToKeep(
            this.sql,
            lifetimePrefix({ tenant: core.tenant, sessionId: core.id, lifetime: core.lifetime }),
          );
    if (core !== null) this.indexer.removed(core.tenant, core.id);
    this.audit.reload();
    this.current = null;
    this.retained = null;
    this.waiters.wakeAll();
    await this.state.blockConcurrencyWhile(async () => {
      await this.state.storage.deleteAlarm();
      await this.state.storage.deleteAll();
      this.physicalAlarm.forget();
      if (sweeps.length > 0) {
        this.state.storage.transactionSync(() => keepPrefixes(this.sql, sweeps));
        this.sweepDueAt = Date.now();
        await this.armAlarm(false);
      }
    });
  }

  /**
   * One sweeping turn of the alarm: bounded batches of R2 deletes. Once nothing is left of a
   * deleted session, its storage goes too, so the object keeps nothing.
   */
  async sweepOutputs(): Promise<void> {
    if (this.sweepDueAt === null || this.sweepDueAt > Date.now()) return;
    // Without the binding nothing was ever uploaded here; nothing to sweep, no alarm to spin.
    if (this.bucket === undefined) {
      this.sweepDueAt = null;
      return;
    }
    let more: boolean;
    try {
      more = await sweepBatches(this.sql, this.bucket, (run) =>
        this.state.storage.transactionSync(run),
      );
    } catch (error) {
      // R2 failing must not hold back the session's own timers (deliveries, ceilings): later.
      console.error(`output sweep failed: ${error instanceof Error ? error.name : "error"}`);
      this.sweepDueAt = Date.now() + SWEEP_RETRY_MS;
      return;
    } finally {
      this.metered.settle();
    }
    this.sweepDueAt = more ? Date.now() + SWEEP_PAUSE_MS : null;
    if (!more && this.current === null && !hasSchema(this.sql)) {
      await this.state.storage.deleteAll();
      this.physicalAlarm.forget();
    }
  }

  /**
   * When the session's next timer can run: an attempt held back by a POST on the wire is due
   * once that POST must have ended (and not sooner than a second from now, so a POST a little
   * past its deadline cannot make the alarm spin); ceilings and retention keep their times.
   */
  nextDue(): number | null {
    const core = this.current;
    if (core === null) return null;
    const runnable = nextDueAt(core, this.retained, {
      config: this.config,
      postOnWire: this.postOnWire,
    });
    const attemptAt =
      this.postOnWire && core.resume !== null ? resumeNextAttemptAt(core.resume) : null;
    const held =
      attemptAt === null ? null : Math.max(attemptAt, this.wireUntil, Date.now() + 1_000);
    return runnable === null ? held : held === null ? runnable : Math.min(runnable, held);
  }

  /** A timer that can run now is due: an attempt held back by a POST on the wire is not. */
  dueNow(): boolean {
    const due =
      this.current === null
        ? null
        : nextDueAt(this.current, this.retained, {
            config: this.config,
            postOnWire: this.postOnWire,
          });
    return due !== null && due <= Date.now();
  }

  armAlarm(inAlarm: boolean, floorMs = 1): Promise<void> {
    // The index's retry and a wake's window only arm the alarm: they are no timers of the session
    // (see `dueNow`).
    const due = () => {
      const index = this.indexer.alarmAt(this.indexKeys());
      const trim =
        this.current === null ? null : this.read((sql) => this.audit.trimDueAt(sql, Date.now()));
      const times = [this.nextDue(), index, this.sweepDueAt, trim].filter(
        (time): time is number => time !== null,
      );
      return times.length === 0 ? null : Math.min(...times);
    };
    return this.physicalAlarm.arm(due, inAlarm, floorMs);
  }

  armAlarmInBackground(): void {
    this.state.waitUntil(
      this.armAlarm(false).catch((error: unknown) => {
        // Retried already: keep trying while this object lives, since a session nobody touches
        // again (suspended on a dead runner) would otherwise lose its ceiling.
        console.error("setAlarm failed after retries; trying again in 5 s", error);
        setTimeout(() => this.armAlarmInBackground(), ARM_AGAIN_MS);
      }),
    );
  }

  /** The index entry's status and times, without counting the inbox (what timing needs). */
  indexKeys(): IndexEntry | null {
    return this.current === null ? null : indexEntryOf(this.current, 0, this.config);
  }

  /** The entry of the index (the inbox is counted only for a session that is listed). */
  indexEntryNow(): IndexEntry | null {
    const core = this.current;
    if (core === null) return null;
    const entry = indexEntryOf(core, 0, this.config);
    if (entry.attention === null) return entry;
    return indexEntryOf(
      core,
      this.read((sql) => store.countPending(sql, Date.now())),
      this.config,
    );
  }

  /** An alarm fired: the platform cleared it, and the stats count it. */
  alarmFired(): void {
    this.alarms += 1;
    this.physicalAlarm.forget();
  }

  /** Operational counters since this object started: what a session costs in billed units. */
  stats() {
    return {
      rows_read: this.meter.rowsRead,
      rows_written: this.meter.rowsWritten,
      database_bytes: this.state.storage.sql.databaseSize,
      alarms: this.alarms,
      index_rows_written: this.indexer.rowsWritten,
      sql_statements: this.meter.statements.size,
    };
  }
}
