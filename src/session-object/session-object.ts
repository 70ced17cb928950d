// The session Durable Object: load the rows a rule needs → decide → persist (one transactionSync).
// It keeps only the session core in memory; rules live in src/domain, SQL in the store.

import { DurableObject } from "cloudflare:workers";
import { tokenForReservation } from "../auth/callback-token";
import { type AuditEvent, idsEvent, type StoredEvent } from "../domain/audit";
import { type Config, readConfig, resumeTargetsFor } from "../domain/config";
import type { Ctx, Decision, Effect } from "../domain/decision";
import { IN_FLIGHT_MARGIN_MS, nextDueAt, recordDelivery, tick } from "../domain/delivery";
import { fail, type Result } from "../domain/errors";
import { ack, type Claim, claim, type InboxCounts } from "../domain/inbox";
import { type IndexEntry, indexEntryOf } from "../domain/index-entry";
import {
  type CompletionReply,
  completeJob,
  pullJob,
  reservationSeq,
  reserveJob,
} from "../domain/jobs";
import {
  CLAIM_ANSWER_MAX_BYTES,
  JOB_PAGE_MAX_BYTES,
  MESSAGE_PAGE_MAX_BYTES,
} from "../domain/limits";
import { expireWaitNow, markLost, redeliverFailed } from "../domain/operator";
import { own } from "../domain/records";
import {
  appendMessage,
  createSession,
  finishRun,
  registerRun,
  requireActiveRun,
  suspendRun,
} from "../domain/session";
import { type JobResult, type Role, type Session, sessionStatus, type Wake } from "../domain/state";
import { DEFAULT_TENANT } from "../domain/tenants";
import {
  type JobSummaryView,
  type JobView,
  jobSummaryView,
  jobView,
  type MessageView,
  messageView,
  type SessionView,
  sessionView,
} from "../domain/view";
import type { Env } from "../env";
import { PhysicalAlarm } from "./alarm";
import { AuditStore } from "./audit-store";
import { d1Writer, Indexer } from "./indexer";
import { meteredSql, type SqlMeter } from "./metered-sql";
import { hasSchema, migrate } from "./migrations";
import { postResume } from "./resume-webhook";
import * as store from "./store";
import { Waiters } from "./waiters";

const newId = (prefix: string): string => `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
const MAX_TIMER_ROUNDS = 64;
const ARM_AGAIN_MS = 5_000;
/** How often an object whose settings are refused checks again whether they were fixed. */
const PAUSED_RETRY_MS = 15_000;

/** The core of a decided state: what stays in memory once its rows are written. */
const coreOf = (state: Session): Session =>
  state.messages.length === 0 &&
  Object.keys(state.jobs).length === 0 &&
  Object.keys(state.inbox).length === 0 &&
  Object.keys(state.purged).length === 0
    ? state
    : { ...state, messages: [], jobs: {}, inbox: {}, purged: {} };

export class SessionObject extends DurableObject<Env> {
  private core: Session | null = null;
  /** `oldestRetained` over all rows, kept because it only moves on a purge or from null. */
  private retainedSince: number | null = null;
  private readonly config: Config;
  private readonly waiters = new Waiters();
  private readonly audit: AuditStore;
  private readonly physicalAlarm: PhysicalAlarm;
  private readonly meter: SqlMeter = { rowsRead: 0, rowsWritten: 0 };
  private readonly metered: { sql: SqlStorage; settle(): void };
  private readonly indexer: Indexer;
  private alarms = 0;
  private runningTimers = false;

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

  private get sql(): SqlStorage {
    return this.metered.sql;
  }

  /** The settings the rules see: the resume targets are those of this session's tenant. */
  private ctxAt(now: number): Ctx {
    const tenant = this.core?.tenant ?? DEFAULT_TENANT;
    return { now, config: { ...this.config, ...resumeTargetsFor(this.config, tenant) } };
  }

  /** Runs a read against storage and tallies the rows it read. */
  private read<T>(query: (sql: SqlStorage) => T): T {
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
  private commit<T>(
    loaded: Session | null,
    decision: Decision<T>,
    also?: (sql: SqlStorage) => boolean,
    events: (value: T, state: Session) => readonly AuditEvent[] = () => [],
  ): Result<T> & { effects?: readonly Effect[] } {
    if (!decision.ok) return decision;
    const recorded = decision.state === null ? [] : events(decision.value, decision.state);
    const before = this.core;
    let moved = false;
    this.ctx.storage.transactionSync(() => {
      store.persistSession(this.sql, loaded, decision.state);
      moved = also?.(this.sql) ?? false;
      for (const event of recorded) this.audit.append(this.sql, Date.now(), event);
    });
    this.core = decision.state === null ? null : coreOf(decision.state);
    if (this.core === null) this.retainedSince = null;
    else if (moved || this.retainedSince === null) {
      this.retainedSince = store.oldestRetained(this.sql);
    }
    this.metered.settle();
    this.indexer.changed();
    if ((this.core?.notifySeq ?? 0) !== (before?.notifySeq ?? 0)) this.waiters.wakeAll();
    this.armAlarmInBackground();
    // A wake that is due now is attempted at once instead of waiting for the alarm to be scheduled;
    // the alarm stays armed as the durable fallback (the attempt is recorded before any POST).
    if (!this.runningTimers && this.dueNow()) this.ctx.waitUntil(this.runDueTimers());
    return { ok: true, value: decision.value, effects: decision.effects };
  }

  /** Loads what `decide` reads on top of the core, decides, commits. */
  private decide<T>(
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

  private viewOf(session: Session | null): Result<SessionView> {
    if (session === null) return fail("not_found", "no such session");
    const now = Date.now();
    return {
      ok: true,
      value: this.read((sql) => {
        const pending = store.countPending(sql, now);
        return sessionView(session, {
          inbox: { pending, claimed: session.unacked - pending },
          jobs: store.countJobs(sql),
        });
      }),
    };
  }

  private nextDue(): number | null {
    return this.core === null
      ? null
      : nextDueAt(this.core, this.retainedSince, { config: this.config });
  }

  private armAlarm(inAlarm: boolean, floorMs = 1): Promise<void> {
    // The index retry only arms the alarm: it is no timer of the session (see `dueNow`).
    const due = () => {
      const [session, index] = [this.nextDue(), this.indexer.retryAt];
      return session === null ? index : index === null ? session : Math.min(session, index);
    };
    return this.physicalAlarm.arm(due, inAlarm, floorMs);
  }

  private armAlarmInBackground(): void {
    this.ctx.waitUntil(
      this.armAlarm(false).catch((error: unknown) => {
        // Retried already: keep trying while this object lives, since a session nobody touches
        // again (suspended on a dead runner) would otherwise lose its ceiling.
        console.error("setAlarm failed after retries; trying again in 5 s", error);
        setTimeout(() => this.armAlarmInBackground(), ARM_AGAIN_MS);
      }),
    );
  }

  // ---- sessions and messages -------------------------------------------------------------

  create(cmd: {
    tenant: string;
    id: string;
    resumeUrl: string | null;
    metadata: Record<string, unknown>;
  }): Result<SessionView> {
    const decision = createSession(this.core, { ...cmd, lifetime: newId("lt") }, Date.now());
    if (!decision.ok) return decision;
    this.ctx.storage.transactionSync(() => migrate(this.sql));
    const result = this.commit(null, decision);
    return result.ok ? this.viewOf(result.value) : result;
  }

  view(): Result<SessionView> {
    return this.viewOf(this.core);
  }

  /** Ends the lifetime: every row, the schema and the alarm go; the next create starts afresh. */
  async remove(cmd: { by: "agent" | "operator" } = { by: "agent" }): Promise<Result<null>> {
    if (this.core === null) return fail("not_found", "no such session");
    // The trail goes with the storage it lives in (contract: a deleted session keeps nothing), so
    // an operator's delete leaves this line in the Worker's log instead.
    if (cmd.by === "operator") {
      console.log(
        `operator deleted session ${this.core.tenant}/${this.core.id} (${this.core.lifetime})`,
      );
    }
    this.audit.forget();
    this.indexer.removed(this.core.tenant, this.core.id);
    this.core = null;
    this.retainedSince = null;
    this.waiters.wakeAll();
    await this.ctx.blockConcurrencyWhile(async () => {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.physicalAlarm.forget();
    });
    return { ok: true, value: null };
  }

  appendMessage(cmd: {
    role: Role;
    content: unknown;
    metadata: Record<string, unknown>;
  }): Result<{ index: number }> {
    return this.decide(
      (core) => core,
      (session, now) => appendMessage(session, cmd, now),
    );
  }

  listMessages(cmd: {
    after: number;
    before: number | null;
    limit: number;
  }): Result<{ messages: MessageView[]; next_after: number | null }> {
    if (this.core === null) return fail("not_found", "no such session");
    const page = this.read((sql) =>
      store.listMessages(sql, { ...cmd, maxBytes: MESSAGE_PAGE_MAX_BYTES }),
    );
    return {
      ok: true,
      value: { messages: page.messages.map(messageView), next_after: page.nextAfter },
    };
  }

  // ---- runs ------------------------------------------------------------------------------

  registerRun(cmd: {
    runId: string | null;
    resumeId: string | null;
  }): Result<{ run_id: string; notify_seq: number }> {
    const active = this.core?.run?.runId ?? null;
    return this.decide(
      (core) => core,
      (session, now) =>
        registerRun(session, { runId: cmd.runId ?? newId("run"), resumeId: cmd.resumeId }, now),
      // Registering the active run again changes nothing, so it records nothing either.
      (value) =>
        value.run_id === active
          ? []
          : [{ type: "run_registered", run_id: value.run_id, resume_id: cmd.resumeId }],
    );
  }

  suspend(cmd: {
    runId: string;
    handles: string[];
    wake: Wake;
    ceilingMs: number | null;
  }): Result<SessionView> {
    const result = this.decide(
      (core, sql) => ({ ...core, jobs: store.loadJobs(sql, cmd.handles, false) }),
      (session, now) => suspendRun(session, { ...cmd, resumeId: newId("rs") }, this.ctxAt(now)),
      (_, state) => [
        {
          type: "run_suspended",
          run_id: cmd.runId,
          waiting_for: state.wait?.handles ?? [],
          wake: cmd.wake,
          ceiling_at: state.wait === null ? null : new Date(state.wait.ceilingAt).toISOString(),
        },
      ],
    );
    return result.ok ? this.viewOf(this.core) : result;
  }

  finish(cmd: { runId: string }): Result<SessionView> {
    let pending = 0;
    const result = this.decide(
      (core, sql, now) => {
        pending = store.countPending(sql, now);
        return core;
      },
      (session, now) => finishRun(session, { ...cmd, resumeId: newId("rs"), pending }, now),
      (_, state) => [{ type: "run_finished", run_id: cmd.runId, status: sessionStatus(state) }],
    );
    return result.ok ? this.viewOf(this.core) : result;
  }

  async notifications(cmd: {
    runId: string;
    after: number;
    waitMs: number;
  }): Promise<Result<{ notify_seq: number; pending: number }>> {
    const snapshot = (): Result<{ notify_seq: number; pending: number }> => {
      const core = this.core;
      if (core === null) return fail("not_found", "no such session");
      const pending = this.read((sql) => store.countPending(sql, Date.now()));
      return { ok: true, value: { notify_seq: core.notifySeq, pending } };
    };
    if (this.core === null) return fail("not_found", "no such session");
    const notActive = requireActiveRun(this.core, cmd.runId);
    if (notActive) return notActive;
    if (this.core.notifySeq > cmd.after || cmd.waitMs === 0) return snapshot();
    await this.waiters.wait(cmd.waitMs);
    return snapshot();
  }

  // ---- exec jobs -------------------------------------------------------------------------

  reserveJob(cmd: {
    handle: string;
    command: string;
  }): Result<{ job: JobView; token: string; created: boolean }> {
    const result = this.decide(
      (core, sql) => ({
        ...core,
        jobs: store.loadJobs(sql, [cmd.handle], true),
        purged: store.loadTombstones(sql, [cmd.handle]),
      }),
      (session, now) =>
        reserveJob(
          session,
          {
            ...cmd,
            callbackToken: tokenForReservation(
              own(session.jobs, cmd.handle)?.callbackToken,
              this.config.callbackSecrets,
              {
                tenant: session.tenant,
                sessionId: session.id,
                lifetime: session.lifetime,
                handle: cmd.handle,
                seq: reservationSeq(session, cmd.handle),
              },
            ),
          },
          now,
        ),
    );
    if (!result.ok) return result;
    const { job, created } = result.value;
    return { ok: true, value: { job: jobView(job), token: job.callbackToken, created } };
  }

  getJob(cmd: { handle: string }): Result<JobView> {
    const core = this.core;
    if (core === null) return fail("not_found", "no such session");
    const loaded = this.read((sql) => ({
      ...core,
      jobs: store.loadJobs(sql, [cmd.handle], true),
      purged: store.loadTombstones(sql, [cmd.handle]),
    }));
    const job = pullJob(loaded, cmd.handle);
    return job.ok ? { ok: true, value: jobView(job.value) } : job;
  }

  listJobs(cmd: {
    status: "running" | "done" | null;
    after: number;
    limit: number;
  }): Result<{ jobs: JobSummaryView[]; next: number | null }> {
    if (this.core === null) return fail("not_found", "no such session");
    const page = this.read((sql) => store.listJobs(sql, { ...cmd, maxBytes: JOB_PAGE_MAX_BYTES }));
    return {
      ok: true,
      value: {
        jobs: page.jobs.map(jobSummaryView),
        next: page.next,
      },
    };
  }

  complete(cmd: {
    lifetime: string;
    handle: string;
    tokenSeq: number | null;
    result: JobResult;
    observed: boolean;
  }): Result<CompletionReply> {
    const now = Date.now();
    const core = this.core;
    // Another lifetime's token loads nothing: the domain refuses it on the core alone.
    const loaded =
      core === null || core.lifetime !== cmd.lifetime
        ? core
        : this.read((sql) => ({
            ...core,
            jobs: store.loadJobs(sql, [cmd.handle], true),
            purged: cmd.tokenSeq === null ? store.loadTombstones(sql, [cmd.handle]) : {},
          }));
    const event = (outcome: string, disposition: string | null): AuditEvent => ({
      type: "completion",
      handle: cmd.handle,
      outcome,
      disposition,
      ...(core !== null && core.lifetime !== cmd.lifetime ? { token_lifetime: cmd.lifetime } : {}),
    });
    const result = this.commit(
      loaded,
      completeJob(loaded, { ...cmd, resumeId: newId("rs") }, this.ctxAt(now)),
      undefined,
      (reply) => [event(reply.outcome, reply.outcome === "accepted" ? reply.disposition : null)],
    );
    // A refusal changes nothing but the trail; a session that does not exist keeps no trail.
    if (!result.ok && this.core !== null) this.record(event(result.code, null));
    return result.ok ? { ok: true, value: result.value } : result;
  }

  /** Records an event that comes with no change of state, in its own transaction. */
  private record(event: AuditEvent): void {
    this.ctx.storage.transactionSync(() => this.audit.append(this.sql, Date.now(), event));
    this.metered.settle();
  }

  // ---- inbox -----------------------------------------------------------------------------

  inbox(): Result<InboxCounts> {
    const core = this.core;
    if (core === null) return fail("not_found", "no such session");
    const now = Date.now();
    return {
      ok: true,
      value: this.read((sql) => {
        const pending = store.countPending(sql, now);
        return {
          pending,
          claimed: core.unacked - pending,
          acked: store.countAcked(sql),
          generation: core.generation,
        };
      }),
    };
  }

  claim(cmd: { max: number; leaseMs: number }): Result<{ claims: Claim[] }> {
    return this.decide(
      (core, sql, now) => ({
        ...core,
        inbox: store.loadClaimable(sql, now, cmd.max, CLAIM_ANSWER_MAX_BYTES),
      }),
      (session, now) => claim(session, cmd, now),
      (value) =>
        value.claims.length === 0
          ? []
          : [
              idsEvent(
                "claim",
                value.claims.map((item) => item.envelope.id),
              ),
            ],
    );
  }

  ack(cmd: { ids: string[] }): Result<{ acked: string[]; unknown: string[] }> {
    return this.decide(
      (core, sql) => ({ ...core, inbox: store.loadForAck(sql, cmd.ids) }),
      (session, now) => ack(session, cmd.ids, now),
      (value) => (value.acked.length === 0 ? [] : [idsEvent("ack", value.acked)]),
    );
  }

  // ---- operators -------------------------------------------------------------------------

  /** The audit trail, oldest first, paged by seq. */
  events(cmd: {
    after: number;
    limit: number;
  }): Result<{ events: StoredEvent[]; next_after: number | null }> {
    if (this.core === null) return fail("not_found", "no such session");
    return { ok: true, value: this.read((sql) => this.audit.page(sql, Date.now(), cmd)) };
  }

  redeliver(): Result<{ resume_id: string }> {
    return this.decide(
      (core) => core,
      (session, now) => redeliverFailed(session, { resumeId: newId("rs") }, now),
      (value) => [{ type: "operator", action: "redeliver", resume_id: value.resume_id }],
    );
  }

  expireWaitNow(): Result<SessionView> {
    const result = this.decide(
      (core, sql) => ({
        ...core,
        jobs: core.wait === null ? {} : store.loadJobs(sql, core.wait.handles, false),
      }),
      (session, now) => expireWaitNow(session, { resumeId: newId("rs") }, now),
      () => [{ type: "operator", action: "expire_wait" }],
    );
    return result.ok ? this.viewOf(this.core) : result;
  }

  markLost(cmd: { handle: string }): Result<CompletionReply> {
    return this.decide(
      (core, sql) => ({ ...core, jobs: store.loadJobs(sql, [cmd.handle], true) }),
      (session, now) =>
        markLost(session, { handle: cmd.handle, resumeId: newId("rs") }, this.ctxAt(now)),
      () => [{ type: "operator", action: "mark_lost", handle: cmd.handle }],
    );
  }

  // ---- operations ------------------------------------------------------------------------

  /** Operational counters since this object started: what a session costs in billed units. */
  stats(): Result<{
    rows_read: number;
    rows_written: number;
    database_bytes: number;
    alarms: number;
    index_rows_written: number;
  }> {
    if (this.core === null) return fail("not_found", "no such session");
    return {
      ok: true,
      value: {
        rows_read: this.meter.rowsRead,
        rows_written: this.meter.rowsWritten,
        database_bytes: this.ctx.storage.sql.databaseSize,
        alarms: this.alarms,
        index_rows_written: this.indexer.rowsWritten,
      },
    };
  }

  /** This session's index entry now, sent to the index again: the list route's repair of a stale row. */
  indexEntry(): Result<IndexEntry> {
    const entry = this.indexEntryNow();
    if (entry === null) return fail("not_found", "no such session");
    this.indexer.resend();
    return { ok: true, value: entry };
  }

  /** The entry of the index (the inbox is counted only for a session that is listed). */
  private indexEntryNow(): IndexEntry | null {
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

  /** Does nothing: the floor of a Durable Object call, for benchmarks and health checks. */
  ping(): Result<null> {
    return { ok: true, value: null };
  }

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

  private dueNow(): boolean {
    const due = this.nextDue();
    return due !== null && due <= Date.now();
  }

  /** Runs every due timer, delivering as it goes; one runner at a time (the alarm or a request's). */
  private async runDueTimers(): Promise<void> {
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

  private async deliver(effect: Effect): Promise<void> {
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
