// The session Durable Object: load → decide → persist (one transactionSync) → perform effects.
// Every rule lives in src/domain; this shell owns storage, the one physical alarm and outbound calls.
import { DurableObject } from "cloudflare:workers";
import { tokenForReservation } from "../auth/callback-token";
import { type Config, readConfig } from "../domain/config";
import type { Ctx, Decision, Effect } from "../domain/decision";
import { nextDueAt, recordDelivery, tick } from "../domain/delivery";
import { fail, type Result } from "../domain/errors";
import { ack, type Claim, claim, type InboxCounts, inboxCounts } from "../domain/inbox";
import { type CompletionReply, completeJob, pullJob, reserveJob } from "../domain/jobs";
import {
  appendMessage,
  createSession,
  deleteSession,
  finishRun,
  registerRun,
  requireActiveRun,
  suspendRun,
} from "../domain/session";
import type { JobResult, Role, Session, Wake } from "../domain/state";
import { type JobView, jobView, type SessionView, sessionView } from "../domain/view";
import type { Env } from "../env";
import { PhysicalAlarm } from "./alarm";
import { meteredSql, type SqlMeter } from "./metered-sql";
import { migrate } from "./migrations";
import { postResume } from "./resume-webhook";
import { loadSession, persistSession } from "./store";
import { Waiters } from "./waiters";

const newId = (prefix: string): string => `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
const MAX_TIMER_ROUNDS = 64;

export class SessionObject extends DurableObject<Env> {
  private session: Session | null = null;
  private readonly config: Config;
  private readonly waiters = new Waiters();
  private readonly physicalAlarm: PhysicalAlarm;
  private readonly meter: SqlMeter = { rowsRead: 0, rowsWritten: 0 };
  private readonly metered: { sql: SqlStorage; settle(): void };
  private alarms = 0;
  private runningTimers = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.config = readConfig(env as unknown as Record<string, unknown>);
    this.physicalAlarm = new PhysicalAlarm(ctx.storage);
    this.metered = meteredSql(ctx.storage.sql, this.meter);
    void ctx.blockConcurrencyWhile(async () => {
      // All-or-nothing: a migration that rebuilds a table must never stop half-way.
      ctx.storage.transactionSync(() => migrate(ctx.storage.sql));
      this.session = loadSession(this.metered.sql);
      this.metered.settle();
      await this.armAlarm(false);
    });
  }

  private ctxAt(now: number): Ctx {
    return { now, config: this.config };
  }

  /** Persists and swaps the in-memory view in one synchronous block: no await between them. */
  private commit<T>(decision: Decision<T>): Result<T> & { effects?: readonly Effect[] } {
    if (!decision.ok) return decision;
    const before = this.session;
    this.ctx.storage.transactionSync(() =>
      persistSession(this.metered.sql, before, decision.state),
    );
    this.session = decision.state;
    this.metered.settle();
    if ((decision.state?.notifySeq ?? 0) !== (before?.notifySeq ?? 0)) this.waiters.wakeAll();
    void this.armAlarm(false);
    // A wake that is due now is attempted at once instead of waiting for the alarm to be scheduled;
    // the alarm stays armed as the durable fallback (the attempt is recorded before any POST).
    if (!this.runningTimers && this.dueNow()) this.ctx.waitUntil(this.runDueTimers());
    return { ok: true, value: decision.value, effects: decision.effects };
  }

  private withSession<T>(run: (session: Session, now: number) => Decision<T>): Result<T> {
    if (this.session === null) return fail("not_found", "no such session");
    const result = this.commit(run(this.session, Date.now()));
    return result.ok ? { ok: true, value: result.value } : result;
  }

  private viewOf(session: Session | null): Result<SessionView> {
    return session === null
      ? fail("not_found", "no such session")
      : { ok: true, value: sessionView(session, Date.now()) };
  }

  private armAlarm(inAlarm: boolean): Promise<void> {
    const due = this.session === null ? null : nextDueAt(this.session, { config: this.config });
    return this.physicalAlarm.arm(due, inAlarm);
  }

  // ---- sessions and messages -------------------------------------------------------------

  create(cmd: {
    id: string;
    resumeUrl: string | null;
    metadata: Record<string, unknown>;
  }): Result<SessionView> {
    const now = Date.now();
    const result = this.commit(createSession(this.session, { ...cmd, lifetime: newId("lt") }, now));
    return result.ok ? this.viewOf(result.value) : result;
  }

  view(): Result<SessionView> {
    return this.viewOf(this.session);
  }

  remove(): Result<null> {
    const result = this.commit(deleteSession(this.session));
    if (result.ok) this.waiters.wakeAll();
    return result.ok ? { ok: true, value: null } : result;
  }

  appendMessage(cmd: {
    role: Role;
    content: unknown;
    metadata: Record<string, unknown>;
  }): Result<{ index: number }> {
    return this.withSession((session, now) => appendMessage(session, cmd, now));
  }

  // ---- runs ------------------------------------------------------------------------------

  registerRun(cmd: {
    runId: string | null;
    resumeId: string | null;
  }): Result<{ run_id: string; notify_seq: number }> {
    return this.withSession((session, now) =>
      registerRun(session, { runId: cmd.runId ?? newId("run"), resumeId: cmd.resumeId }, now),
    );
  }

  suspend(cmd: {
    runId: string;
    handles: string[];
    wake: Wake;
    ceilingMs: number | null;
  }): Result<SessionView> {
    const result = this.withSession((session, now) =>
      suspendRun(session, { ...cmd, resumeId: newId("rs") }, this.ctxAt(now)),
    );
    return result.ok ? this.viewOf(result.value) : result;
  }

  finish(cmd: { runId: string }): Result<SessionView> {
    const result = this.withSession((session, now) =>
      finishRun(session, { ...cmd, resumeId: newId("rs") }, now),
    );
    return result.ok ? this.viewOf(result.value) : result;
  }

  async notifications(cmd: {
    runId: string;
    after: number;
    waitMs: number;
  }): Promise<Result<{ notify_seq: number; pending: number }>> {
    const snapshot = (): Result<{ notify_seq: number; pending: number }> =>
      this.session === null
        ? fail("not_found", "no such session")
        : {
            ok: true,
            value: {
              notify_seq: this.session.notifySeq,
              pending: inboxCounts(this.session, Date.now()).pending,
            },
          };
    if (this.session === null) return fail("not_found", "no such session");
    const notActive = requireActiveRun(this.session, cmd.runId);
    if (notActive) return notActive;
    if (this.session.notifySeq > cmd.after || cmd.waitMs === 0) return snapshot();
    await this.waiters.wait(cmd.waitMs);
    return snapshot();
  }

  // ---- exec jobs -------------------------------------------------------------------------

  reserveJob(cmd: {
    handle: string;
    command: string;
  }): Result<{ job: JobView; token: string; created: boolean }> {
    const result = this.withSession((session, now) =>
      reserveJob(
        session,
        {
          ...cmd,
          callbackToken: tokenForReservation(
            session.jobs[cmd.handle]?.callbackToken,
            this.config.callbackSecrets,
            {
              sessionId: session.id,
              lifetime: session.lifetime,
              handle: cmd.handle,
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
    const session = this.session;
    if (session === null) return fail("not_found", "no such session");
    const job = pullJob(session, cmd.handle);
    return job.ok ? { ok: true, value: jobView(job.value) } : job;
  }

  listJobs(): Result<{ jobs: JobView[] }> {
    const session = this.session;
    if (session === null) return fail("not_found", "no such session");
    const jobs = Object.values(session.jobs).sort(
      (a, b) => a.reservedAt - b.reservedAt || (a.handle < b.handle ? -1 : 1),
    );
    return { ok: true, value: { jobs: jobs.map(jobView) } };
  }

  complete(cmd: {
    lifetime: string;
    handle: string;
    result: JobResult;
    observed: boolean;
  }): Result<CompletionReply> {
    const now = Date.now();
    const result = this.commit(
      completeJob(this.session, { ...cmd, resumeId: newId("rs") }, this.ctxAt(now)),
    );
    return result.ok ? { ok: true, value: result.value } : result;
  }

  // ---- inbox -----------------------------------------------------------------------------

  inbox(): Result<InboxCounts> {
    const session = this.session;
    return session === null
      ? fail("not_found", "no such session")
      : { ok: true, value: inboxCounts(session, Date.now()) };
  }

  claim(cmd: { max: number; leaseMs: number }): Result<{ claims: Claim[] }> {
    return this.withSession((session, now) => claim(session, cmd, now));
  }

  ack(cmd: { ids: string[] }): Result<{ acked: string[]; unknown: string[] }> {
    return this.withSession((session, now) => ack(session, cmd.ids, now));
  }

  // ---- timers ----------------------------------------------------------------------------

  /** Operational counters since this object started: what a session costs in billed units. */
  stats(): Result<{
    rows_read: number;
    rows_written: number;
    database_bytes: number;
    alarms: number;
  }> {
    return {
      ok: true,
      value: {
        rows_read: this.meter.rowsRead,
        rows_written: this.meter.rowsWritten,
        database_bytes: this.ctx.storage.sql.databaseSize,
        alarms: this.alarms,
      },
    };
  }

  /** Does nothing: the floor of a Durable Object call, for benchmarks and health checks. */
  ping(): Result<null> {
    return { ok: true, value: null };
  }

  override async alarm(): Promise<void> {
    this.alarms += 1;
    this.physicalAlarm.fired();
    await this.runDueTimers();
    await this.armAlarm(true);
  }

  private dueNow(): boolean {
    const due = this.session === null ? null : nextDueAt(this.session, { config: this.config });
    return due !== null && due <= Date.now();
  }

  /** Runs every due timer, delivering as it goes; one runner at a time (the alarm or a request's). */
  private async runDueTimers(): Promise<void> {
    if (this.runningTimers) return;
    this.runningTimers = true;
    try {
      for (
        let round = 0;
        round < MAX_TIMER_ROUNDS && this.session !== null && this.dueNow();
        round += 1
      ) {
        const result = this.commit(
          tick(
            this.session,
            { resumeId: newId("rs"), random: Math.random() },
            this.ctxAt(Date.now()),
          ),
        );
        for (const effect of (result.ok && result.effects) || []) await this.deliver(effect);
      }
    } finally {
      this.runningTimers = false;
    }
  }

  private async deliver(effect: Effect): Promise<void> {
    const outcome = await postResume(
      effect.url,
      effect.payload,
      this.config.resumeSigningSecret,
      Date.now(),
    );
    // The fetch let other requests in: the domain re-checks that this resume is still the one due.
    if (this.session === null) return;
    this.commit(
      recordDelivery(
        this.session,
        {
          resumeId: effect.payload.resume_id,
          delivered: outcome.delivered,
          error: outcome.delivered ? null : outcome.error,
        },
        this.ctxAt(Date.now()),
      ),
    );
  }
}
