// Drives the real session object and the whole-session History model in lockstep: each command goes
// to both, and what a client can observe of each is reduced to the same time-independent shape.
// The object runs on the real clock and the model on its own, so no time value is compared; timers
// are driven by ageing the object's rows (SQL) and advancing the model's clock by the same amount.
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { expect } from "vitest";
import { readConfig } from "../../src/domain/config";
import type { Ctx, Decision } from "../../src/domain/decision";
import { nextDueAt, oldestRetained, tick } from "../../src/domain/delivery";
import { ack, type Claim, claim, inboxCounts } from "../../src/domain/inbox";
import { completeJob, pullJob, reserveJob } from "../../src/domain/jobs";
import { finishRun, suspendRun } from "../../src/domain/session";
import type { Session, Wake } from "../../src/domain/state";
import { jobSummaryView, jobView, messageView, sessionView } from "../../src/domain/view";
import { reasonForResult } from "../../src/domain/wake";
import { hasSchema } from "../../src/session-object/migrations";
import type { SessionObject } from "../../src/session-object/session-object";
import * as store from "../../src/session-object/store";
import { complete as postCompletion, stubOf } from "./api";
import {
  checkInvariants,
  History,
  type Command as HistoryCommand,
  resultOf,
  type Step,
} from "./history";

export const HANDLES = ["a", "b"] as const;

/** The object's own configuration: the model's timers run with it when the rows are aged. */
export const CONFIG: Ctx["config"] = readConfig(env as unknown as Record<string, unknown>);
/** Longer than every timer (retention, wait ceiling, lease, claim timeout): ageing fires them all. */
export const AGE_MS = 2 * Math.max(CONFIG.jobRetentionMs, CONFIG.waitCeilingMs, 3_600_000);

/**
 * Which callback token the runner presents: the latest reservation of the handle in this lifetime,
 * the first one (older than the latest once the handle was purged and reserved again), or the
 * latest one of a lifetime that ended (deleted, maybe re-created since).
 */
export type TokenChoice = "latest" | "first" | "ended";

export type Op =
  | { t: "create" }
  | { t: "delete" }
  | { t: "reserve"; h: string; other: boolean }
  | { t: "register" }
  | { t: "finish" }
  | { t: "suspend"; picks: number[]; wake: Wake; stray: boolean }
  | { t: "complete"; pick: number; variant: number; token: TokenChoice }
  | { t: "append"; text: string }
  | { t: "claim"; max: number; leaseMs: number }
  | { t: "ack"; n: number; again: boolean; unknown: boolean }
  | { t: "age" }
  | { t: "restart" };

const handle = fc.constantFrom(...HANDLES);

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant({ t: "create" as const }), weight: 2 },
  { arbitrary: fc.constant({ t: "delete" as const }), weight: 1 },
  {
    arbitrary: fc.record({
      t: fc.constant("reserve" as const),
      h: handle,
      other: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
    }),
    weight: 6,
  },
  { arbitrary: fc.constant({ t: "register" as const }), weight: 5 },
  { arbitrary: fc.constant({ t: "finish" as const }), weight: 2 },
  {
    // The waited handles are picked when the command runs, among the session's jobs (running ones
    // first), so that most suspends are valid; `stray` adds a handle that was never reserved.
    arbitrary: fc.record({
      t: fc.constant("suspend" as const),
      picks: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 }),
      wake: fc.constantFrom("all" as const, "any" as const),
      stray: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    }),
    weight: 5,
  },
  {
    // The handle is picked when the command runs, among those the runner holds a token of.
    arbitrary: fc.record({
      t: fc.constant("complete" as const),
      pick: fc.integer({ min: 0, max: 2 }),
      variant: fc.integer({ min: 0, max: 3 }),
      token: fc.constantFrom<TokenChoice>("latest", "latest", "latest", "latest", "first", "ended"),
    }),
    weight: 9,
  },
  {
    arbitrary: fc.string({ maxLength: 6 }).map((text) => ({ t: "append" as const, text })),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("claim" as const),
      max: fc.integer({ min: 1, max: 3 }),
      // Leases never lapse on the real clock within a run; ageing lapses them all.
      leaseMs: fc.integer({ min: 300_000, max: 3_600_000 }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("ack" as const),
      n: fc.integer({ min: 1, max: 3 }),
      again: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
      unknown: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    }),
    weight: 4,
  },
  { arbitrary: fc.constant({ t: "age" as const }), weight: 4 },
  { arbitrary: fc.constant({ t: "restart" as const }), weight: 1 },
);

/** Results a runner reports; 3 repeats 0 as `observed` (the same result, so a duplicate of it). */
const VARIANTS = [0, 1, 2, 4].map(resultOf);

/** The object's RPC surface with plain return types (the stub's Rpc types add nothing here). */
type ObjectApi = {
  [K in keyof SessionObject]: SessionObject[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

type Outcome = { ok: true; value?: unknown } | { ok: false; code: string };

const failed = (code: string): Outcome => ({ ok: false, code });

/** A domain result or decision, or an RPC answer, as an outcome (a thrown error is one too). */
function outcome<T>(
  result: { ok: true; value: T } | { ok: false; code: string },
  shape: (value: T) => unknown = () => undefined,
): Outcome {
  if (!result.ok) return failed(result.code);
  const value = shape(result.value);
  return value === undefined ? { ok: true } : { ok: true, value };
}

async function attempt<T>(
  run: () => Promise<{ ok: true; value: T } | { ok: false; code: string }>,
): Promise<{ ok: true; value: T } | { ok: false; code: string }> {
  try {
    return await run();
  } catch (error) {
    return { ok: false, code: `threw: ${error instanceof Error ? error.message : String(error)}` };
  }
}

interface Token {
  readonly seq: number;
  readonly token: string;
}

type Side = "model" | "real";

/** The states of a resume that `isResumePending` counts: the session is `resuming`. */
const PENDING_RESUME_STATES = new Set<string>(["scheduled", "delivered", "no_target"]);

/** Counts of the situations the run reached, so a test can tell its generator covers them. */
export const coverage = new Map<string, number>();
const cover = (what: string) => coverage.set(what, (coverage.get(what) ?? 0) + 1);

/**
 * One session id, the History model and the real object side by side. `step` applies one command
 * to both and throws (a vitest expectation) at the first difference a client could see.
 */
export class Lockstep {
  readonly history = new History();
  private realRunId: string | null = null;
  /** Model lifetime (`lt-1` …) ⇄ the object's lifetime. */
  private readonly realLifetimeOf = new Map<string, string>();
  private readonly modelLifetimeOf = new Map<string, string>();
  /** Callback tokens handed out, per model lifetime and handle, in reservation order. */
  private readonly tokens = new Map<string, Token[]>();
  /** Model lifetimes that ended, the latest last. */
  private readonly ended: string[] = [];
  /** Envelope ids: the model's (content-derived from its lifetime names) ⇄ the object's. */
  private readonly realEnvelopeOf = new Map<string, string>();
  private readonly modelEnvelopeOf = new Map<string, string>();
  /** Handles reserved again after a purge in this lifetime (History's once-only check predates that). */
  private readonly reused = new Set<string>();
  /**
   * A suspend that finds results of different reasons already there wakes for the latest of them;
   * the object orders them by its clock, which can tie within a millisecond: either reason is right.
   */
  private reasonAmbiguous = false;
  private readonly lastResume: Record<Side, string | null> = { model: null, real: null };
  private ids = 0;
  readonly trace: string[] = [];

  private constructor(readonly sid: string) {}

  static async start(sid: string): Promise<Lockstep> {
    const lockstep = new Lockstep(sid);
    await lockstep.step({ t: "create" });
    return lockstep;
  }

  /** One stub per incarnation of the object: a restart drops it, and the next call makes a new one. */
  private cachedStub: DurableObjectStub<SessionObject> | null = null;
  private get rawStub(): DurableObjectStub<SessionObject> {
    this.cachedStub ??= stubOf(this.sid);
    return this.cachedStub;
  }
  private get stub(): ObjectApi {
    return this.rawStub as unknown as ObjectApi;
  }
  private async restart(): Promise<void> {
    await abortAllDurableObjects();
    this.cachedStub = null;
  }

  private id(prefix: string): string {
    this.ids += 1;
    return `${prefix}-driver-${this.ids}`;
  }

  private ctx(): Ctx {
    return { now: this.history.now, config: CONFIG };
  }

  private get lifetime(): string | null {
    return this.history.state?.lifetime ?? null;
  }

  /** Applies a decision to the model the way History does, and records the step. */
  private applyModel<T>(command: HistoryCommand, decision: Decision<T>): Step {
    const before = this.history.state;
    if (decision.ok) this.history.state = decision.state;
    const step: Step = {
      command,
      before,
      after: this.history.state,
      ok: decision.ok,
      code: decision.ok ? undefined : decision.code,
    };
    this.history.steps.push(step);
    return step;
  }

  async step(op: Op): Promise<void> {
    this.trace.push(JSON.stringify(op));
    // The model's clock moves on every command, so its completions are ordered like the object's.
    this.history.now += 1;
    const stepsBefore = this.history.steps.length;
    const resumeBefore = this.history.state?.resume?.resumeId ?? null;
    const ambiguousBefore = this.reasonAmbiguous;
    this.reasonAmbiguous = false;
    const replies = await this.apply(op);
    const where = `step ${this.trace.length} ${this.trace.at(-1)} (session ${this.sid})`;
    const resumeAfter = this.history.state?.resume?.resumeId ?? null;
    // The flag holds for the resume a suspend made, until another one replaces it.
    if (resumeAfter === resumeBefore) this.reasonAmbiguous ||= ambiguousBefore;
    expect(replies.real, `the answer to ${where}`).toEqual(replies.model);
    cover(replies.model.ok ? `ok ${op.t}` : `refused ${op.t} ${replies.model.code}`);

    const model = this.observeModel();
    const real = await this.observeReal();
    expect(real, `what a client observes after ${where}`).toEqual(model);

    for (const handle of this.reused) this.history.admitted.delete(handle);
    for (const step of this.history.steps.slice(stepsBefore)) checkInvariants(this.history, step);
  }

  private async apply(op: Op): Promise<{ model: Outcome; real: Outcome }> {
    const s = this.history.state;
    const stub = this.stub;
    switch (op.t) {
      case "create": {
        const real = await attempt(() =>
          stub.create({ tenant: "default", id: this.sid, resumeUrl: null, metadata: {} }),
        );
        const step = this.history.run({ t: "create" });
        if (step.ok && step.after !== null && real.ok) {
          this.realLifetimeOf.set(step.after.lifetime, real.value.lifetime);
          this.modelLifetimeOf.set(real.value.lifetime, step.after.lifetime);
          this.realRunId = null;
          this.reused.clear();
          if (this.ended.length > 0) cover("re-created");
        }
        return { model: stepOutcome(step), real: outcome(real) };
      }
      case "delete": {
        const real = await attempt(() => stub.remove());
        const step = this.history.run({ t: "delete" });
        if (step.ok && s !== null) {
          this.ended.push(s.lifetime);
          this.realRunId = null;
          this.reused.clear();
        }
        return { model: stepOutcome(step), real: outcome(real) };
      }
      case "reserve":
        return this.reserve(s, op.h, op.other);
      case "register": {
        const real = await attempt(() => stub.registerRun({ runId: null, resumeId: null }));
        if (s === null) return { model: failed("not_found"), real: outcome(real) };
        const step = this.history.run({ t: "register" });
        if (step.ok && real.ok) this.realRunId = real.value.run_id;
        return {
          model: step.ok ? { ok: true, value: { notify_seq: s.notifySeq } } : stepOutcome(step),
          real: outcome(real, (value) => ({ notify_seq: value.notify_seq })),
        };
      }
      case "finish": {
        const real = await attempt(() => stub.finish({ runId: this.realRunId ?? "run-none" }));
        let model: Outcome;
        if (s === null) model = failed("not_found");
        else if (s.run === null)
          // No active run: the object is asked with the last run id it gave out (or none).
          model = outcome(finishRun(s, { runId: "run-none", resumeId: "-", pending: 0 }, 0));
        else model = stepOutcome(this.history.run({ t: "finish" }));
        if (model.ok) this.realRunId = null;
        return { model, real: outcome(real) };
      }
      case "suspend": {
        const hs = waitedHandles(s, op);
        this.trace[this.trace.length - 1] += ` waiting for ${hs.join(",")}`;
        const real = await attempt(() =>
          stub.suspend({
            runId: this.realRunId ?? "run-none",
            handles: hs,
            wake: op.wake,
            ceilingMs: null,
          }),
        );
        let model: Outcome;
        if (s === null) model = failed("not_found");
        else if (s.run === null)
          model = outcome(
            suspendRun(
              s,
              { runId: "run-none", handles: hs, wake: op.wake, ceilingMs: null, resumeId: "-" },
              this.ctx(),
            ),
          );
        else {
          const reasons = new Set(
            hs.flatMap((h) => {
              const job = s.jobs[h];
              return job?.result ? [reasonForResult(job)] : [];
            }),
          );
          const step = this.history.run({ t: "suspend", hs, wake: op.wake, ceilingMs: null });
          const woke = step.ok && step.after?.resume?.resumeId !== s.resume?.resumeId;
          if (woke) cover("suspend found its results already there");
          if (woke && reasons.size > 1) this.reasonAmbiguous = true;
          model = stepOutcome(step);
        }
        if (model.ok) this.realRunId = null;
        return { model, real: outcome(real) };
      }
      case "complete":
        return this.complete(s, op);
      case "append": {
        const real = await attempt(() =>
          stub.appendMessage({ role: "user", content: op.text, metadata: {} }),
        );
        if (s === null) return { model: failed("not_found"), real: outcome(real) };
        const step = this.history.run({ t: "append", text: op.text });
        return {
          model: step.ok ? { ok: true, value: { index: s.messageCount } } : stepOutcome(step),
          real: outcome(real, (value) => value),
        };
      }
      case "claim": {
        const real = await attempt(() => stub.claim({ max: op.max, leaseMs: op.leaseMs }));
        if (s === null) return { model: failed("not_found"), real: outcome(real) };
        const expected = claim(s, { max: op.max, leaseMs: op.leaseMs }, this.history.now);
        this.history.run({ t: "claim", max: op.max, leaseMs: op.leaseMs });
        if (expected.ok && real.ok) this.pairEnvelopes(expected.value.claims, real.value.claims);
        return {
          model: outcome(expected, (value) => value.claims.map((c) => this.claimShape(c, "model"))),
          real: outcome(real, (value) => value.claims.map((c) => this.claimShape(c, "real"))),
        };
      }
      case "ack":
        return this.ack(s, op);
      case "age":
        await this.age(s);
        return { model: { ok: true }, real: { ok: true } };
      case "restart":
        await this.restart();
        return { model: { ok: true }, real: { ok: true } };
    }
  }

  private async reserve(
    s: Session | null,
    h: string,
    other: boolean,
  ): Promise<{ model: Outcome; real: Outcome }> {
    const command = `${other ? "other" : "run"} ${h}`;
    const real = await attempt(() => this.stub.reserveJob({ handle: h, command }));
    const realOutcome = outcome(real, (value) => ({
      created: value.created,
      job: this.jobShape(value.job, "real"),
    }));
    if (s === null) return { model: failed("not_found"), real: realOutcome };
    const fresh = s.jobs[h] === undefined;
    const step = other
      ? this.applyModel(
          { t: "reserve", h },
          reserveJob(s, { handle: h, command, callbackToken: "t" }, this.history.now),
        )
      : this.history.run({ t: "reserve", h });
    const job = step.after?.jobs[h];
    if (step.ok && job !== undefined && real.ok) {
      const key = `${s.lifetime}\n${h}`;
      const held = this.tokens.get(key) ?? [];
      if (fresh) {
        if (held.length > 0) {
          this.reused.add(h);
          cover("handle reserved again after its purge");
        }
        this.tokens.set(key, [...held, { seq: job.seq, token: real.value.token }]);
      } else {
        cover("same reservation again");
        // Same handle and command again: the identical callback token (one reservation).
        expect(real.value.token, `the token of a repeated reservation of ${h}`).toBe(
          held.at(-1)?.token,
        );
      }
    }
    return {
      model:
        step.ok && job
          ? { ok: true, value: { created: fresh, job: this.jobShape(jobView(job), "model") } }
          : stepOutcome(step),
      real: realOutcome,
    };
  }

  /** The runner's token for a completion: which handle (by pick, among those it holds) and which one. */
  private tokenFor(
    pick: number,
    choice: TokenChoice,
  ): { lifetime: string; h: string; token: Token } | null {
    // Without a lifetime that ended, an `ended` choice falls back to the current lifetime's token.
    const lifetimes: (string | null)[] = choice === "ended" ? [...this.ended].reverse() : [];
    lifetimes.push(this.lifetime);
    for (const lifetime of lifetimes) {
      if (lifetime === null) continue;
      const held = HANDLES.filter((h) => this.tokens.has(`${lifetime}\n${h}`));
      const h = held[pick % Math.max(1, held.length)];
      const tokens = h === undefined ? [] : (this.tokens.get(`${lifetime}\n${h}`) ?? []);
      const token = choice === "first" ? tokens[0] : tokens.at(-1);
      if (h !== undefined && token !== undefined) return { lifetime, h, token };
    }
    return null;
  }

  private async complete(
    s: Session | null,
    op: Extract<Op, { t: "complete" }>,
  ): Promise<{ model: Outcome; real: Outcome }> {
    const chosen = this.tokenFor(op.pick, op.token);
    // A runner without a token of this handle cannot call at all.
    if (chosen === null) {
      cover("complete without a token");
      return { model: { ok: true }, real: { ok: true } };
    }
    const h = chosen.h;
    this.trace[this.trace.length - 1] +=
      ` for ${h} with token seq ${chosen.token.seq} of ${chosen.lifetime}`;
    const { result, observed } = VARIANTS[op.variant] ?? VARIANTS[0]!;
    const answer = await postCompletion(this.sid, h, chosen.token.token, {
      status: result.status,
      exit_code: result.exitCode,
      output: result.output,
      output_truncated: result.outputTruncated,
      output_bytes_total: result.outputBytesTotal,
      ended_by: result.endedBy,
      observed,
    });
    const real: Outcome =
      answer.status === 202 || answer.status === 200
        ? { ok: true, value: { status: answer.status, ...answer.body } }
        : failed(answer.body?.code ?? `status ${answer.status}`);
    const decision = completeJob(
      s,
      {
        lifetime: chosen.lifetime,
        handle: h,
        tokenSeq: chosen.token.seq,
        result,
        observed,
        resumeId: this.id("rs"),
      },
      this.ctx(),
    );
    this.applyModel(
      { t: "complete", h, variant: op.variant, stale: chosen.lifetime !== s?.lifetime },
      decision,
    );
    if (decision.ok) {
      const reply = decision.value;
      cover(reply.outcome === "accepted" ? `accepted ${reply.disposition}` : reply.outcome);
      if (reply.outcome === "accepted" && reply.disposition !== "observed")
        this.history.admitted.add(h);
    }
    const model = outcome(decision, (value) => ({
      status: value.outcome === "accepted" ? 202 : 200,
      ...value,
    }));
    return { model, real };
  }

  private async ack(
    s: Session | null,
    op: Extract<Op, { t: "ack" }>,
  ): Promise<{ model: Outcome; real: Outcome }> {
    const items = Object.values(s?.inbox ?? {}).sort(
      (a, b) => a.envelope.generation - b.envelope.generation,
    );
    const ids = [
      ...items
        .filter((item) => item.state === "claimed")
        .slice(0, op.n)
        .map((item) => item.envelope.id),
      ...(op.again ? items.filter((item) => item.state === "acked").slice(0, 1) : []).map(
        (item) => item.envelope.id,
      ),
    ];
    if (op.unknown || ids.length === 0) ids.push("env_unknown");
    const realIds = ids.map((id) => this.realEnvelopeOf.get(id) ?? id);
    const real = await attempt(() => this.stub.ack({ ids: realIds }));
    const realOutcome = outcome(real, (value) => ({
      acked: value.acked.map((id) => this.modelEnvelopeOf.get(id) ?? `real ${id}`),
      unknown: value.unknown.map((id) => this.modelEnvelopeOf.get(id) ?? id),
    }));
    if (s === null) return { model: failed("not_found"), real: realOutcome };
    const decision = ack(s, ids, this.history.now);
    this.applyModel({ t: "ack", n: op.n }, decision);
    if (decision.ok) {
      for (const id of decision.value.acked) {
        const item = s.inbox[id];
        if (item !== undefined) this.history.acked.add(item.envelope.correlation_id);
        cover(item?.state === "acked" ? "acked again" : "acked");
      }
      if (decision.value.unknown.length > 0) cover("ack of an unknown id");
    }
    return { model: outcome(decision, (value) => value), real: realOutcome };
  }

  /**
   * Moves both clocks past every timer: the model's by AGE_MS, the object's by shifting every
   * stored time back by AGE_MS and restarting it (its caches reload from storage), then running
   * its alarm until nothing is due.
   */
  private async age(s: Session | null): Promise<void> {
    this.history.now += AGE_MS;
    for (let round = 0; round < 8; round += 1) {
      const state = this.history.state;
      if (state === null) break;
      const retainedSince = oldestRetained(state);
      const due = nextDueAt(state, retainedSince, this.ctx());
      if (due === null || due > this.history.now) break;
      const pending = inboxCounts(state, this.history.now).pending;
      const decision = tick(state, { resumeId: this.id("rs"), pending, retainedSince }, this.ctx());
      this.applyModel({ t: "tick" }, decision);
      if (decision.ok && decision.value.purgeBefore !== null) cover("retention purged");
    }
    if (s !== null && s.wait !== null) cover("wait ceiling passed");

    await runInDurableObject(this.rawStub, (_, state) => {
      const sql = state.storage.sql;
      if (!hasSchema(sql)) return;
      state.storage.transactionSync(() => shiftTimes(sql, AGE_MS));
    });
    await this.restart();
    await runDurableObjectAlarm(this.rawStub);
    // Whatever the alarm left due (it fires on its own too, so it may have run already) runs now.
    const stillDue = await inObject(this.rawStub, async (instance, state) => {
      for (let round = 0; round < 4; round += 1) {
        const sql = state.storage.sql;
        const core = hasSchema(sql) ? store.loadCore(sql) : null;
        if (core === null) return null;
        const due = nextDueAt(core, store.oldestRetained(sql), { config: CONFIG });
        if (due === null || due > Date.now()) return null;
        await instance.alarm();
      }
      return "timers still due after four alarms";
    });
    expect(stillDue).toBeNull();
  }

  // ---- observations ------------------------------------------------------------------------

  private realLifetimeName(lifetime: string): string {
    return this.modelLifetimeOf.get(lifetime) ?? `unknown lifetime ${lifetime}`;
  }

  private jobShape(
    job: {
      handle: string;
      command: string;
      lifetime: string;
      status: string;
      exit_code: number | null;
      output?: string;
      output_truncated: boolean;
      output_bytes_total: number;
      ended_by: string | null;
      completed_at: string | null;
    },
    side: Side,
  ) {
    return {
      handle: job.handle,
      command: job.command,
      lifetime: side === "model" ? job.lifetime : this.realLifetimeName(job.lifetime),
      status: job.status,
      exit_code: job.exit_code,
      ...(job.output === undefined ? {} : { output: job.output }),
      output_truncated: job.output_truncated,
      output_bytes_total: job.output_bytes_total,
      ended_by: job.ended_by,
      completed: job.completed_at !== null,
    };
  }

  /** Learns which object envelope each model envelope is, from two claims of the same step. */
  private pairEnvelopes(model: readonly Claim[], real: readonly Claim[]): void {
    if (model.length !== real.length) return;
    model.forEach((entry, index) => {
      const modelId = entry.envelope.id;
      const realId = real[index]?.envelope.id;
      if (realId === undefined) return;
      if (!this.realEnvelopeOf.has(modelId) && !this.modelEnvelopeOf.has(realId)) {
        this.realEnvelopeOf.set(modelId, realId);
        this.modelEnvelopeOf.set(realId, modelId);
      }
    });
  }

  private envelopeName(id: string, side: Side): string {
    if (side === "model") return id;
    return this.modelEnvelopeOf.get(id) ?? `unpaired ${id}`;
  }

  private claimShape(entry: Claim, side: Side) {
    const { id, created_at: _created, ...envelope } = entry.envelope;
    const message = entry.provider_message;
    const name = this.envelopeName(id, side);
    return {
      envelope: { ...envelope, id: name },
      provider_message: {
        ...message,
        id: message.id === id ? name : `other ${message.id}`,
        metadata: {
          ...message.metadata,
          session_message: {
            ...message.metadata.session_message,
            id: message.metadata.session_message.id === id ? name : "other",
          },
        },
      },
    };
  }

  private viewShape(view: ReturnType<typeof sessionView>, side: Side, runId: string | null) {
    const { resume, run, waiting_for_bash: wait, suspension } = view;
    const shape = {
      lifetime: side === "model" ? view.lifetime : this.realLifetimeName(view.lifetime),
      status: view.status,
      run: run && { ours: run.run_id === runId, resume_id: run.resume_id },
      waiting_for_bash: wait && { handles: wait.handles, wake: wait.wake },
      suspension: suspension && { reason: suspension.reason, resumable: suspension.resumable },
      metadata: view.metadata,
      message_count: view.message_count,
      inbox: view.inbox,
      jobs: view.jobs,
      notify_seq: view.notify_seq,
      resume_url: view.resume_url,
      // Only the object delivers (no target here: `no_target` at once); the model's stays
      // `scheduled` until its clock is aged. Both are a pending resume.
      resume: resume && {
        state: PENDING_RESUME_STATES.has(resume.state) ? "pending" : resume.state,
        reason: this.reasonAmbiguous ? "either" : resume.reason,
        attempts: resume.attempts,
        new: resume.resume_id !== this.lastResume[side],
      },
    };
    this.lastResume[side] = resume?.resume_id ?? null;
    return shape;
  }

  private observeModel() {
    const s = this.history.state;
    const now = this.history.now;
    if (s === null) {
      this.lastResume.model = null;
      return notFoundEverywhere();
    }
    const counts = inboxCounts(s, now);
    const jobs = Object.values(s.jobs).sort((a, b) => a.seq - b.seq);
    const done = jobs.filter((job) => job.result !== null);
    const running = jobs.filter((job) => job.result === null);
    const summaries = (list: typeof jobs) =>
      list.map((job) => this.jobShape(jobSummaryView(job), "model"));
    return {
      view: {
        ok: true,
        value: this.viewShape(
          sessionView(s, {
            inbox: { pending: counts.pending, claimed: counts.claimed },
            jobs: { running: running.length, done: done.length },
          }),
          "model",
          s.run?.runId ?? null,
        ),
      },
      inbox: { ok: true, value: counts },
      messages: { ok: true, value: s.messages.map(messageView).map(messageShape) },
      jobs: {
        ok: true,
        value: { all: summaries(jobs), running: summaries(running), done: summaries(done) },
      },
      pulls: Object.fromEntries(
        HANDLES.map((h) => [
          h,
          outcome(pullJob(s, h), (job) => this.jobShape(jobView(job), "model")),
        ]),
      ),
    };
  }

  private async observeReal() {
    // One request reads every view through the object's own methods, in one turn of its event loop.
    const page = { after: 0, limit: 500 };
    const [view, inbox, messages, all, running, done, ...pulls] = await inObject(
      this.rawStub,
      (object) =>
        [
          object.view(),
          object.inbox(),
          object.listMessages({ after: -1, before: null, limit: 500 }),
          object.listJobs({ status: null, ...page }),
          object.listJobs({ status: "running", ...page }),
          object.listJobs({ status: "done", ...page }),
          ...HANDLES.map((h) => object.getJob({ handle: h })),
        ] as const,
    );
    if (!view.ok) this.lastResume.real = null;
    const summaries = (list: typeof all) =>
      list.ok ? list.value.jobs.map((job) => this.jobShape(job, "real")) : list.code;
    const lists = { all: summaries(all), running: summaries(running), done: summaries(done) };
    return {
      view: outcome(view, (value) => this.viewShape(value, "real", this.realRunId)),
      inbox: outcome(inbox, (value) => value),
      messages: outcome(messages, (value) => value.messages.map(messageShape)),
      jobs: all.ok ? { ok: true, value: lists } : failed(all.code),
      pulls: Object.fromEntries(
        HANDLES.map((h, index) => [h, outcome(pulls[index]!, (job) => this.jobShape(job, "real"))]),
      ),
    };
  }
}

/** Runs `callback` inside the session's object, on its instance (what `runInDurableObject` does). */
function inObject<R>(
  stub: DurableObjectStub<SessionObject>,
  callback: (object: SessionObject, state: DurableObjectState) => R | Promise<R>,
): Promise<R> {
  return runInDurableObject(stub, (instance, state) =>
    callback(instance as unknown as SessionObject, state),
  );
}

/** The handles a suspend waits for: its picks among the jobs, running ones first (by seq). */
function waitedHandles(s: Session | null, op: Extract<Op, { t: "suspend" }>): string[] {
  const jobs = Object.values(s?.jobs ?? {}).sort(
    (a, b) => Number(a.result !== null) - Number(b.result !== null) || a.seq - b.seq,
  );
  const candidates = jobs.length > 0 ? jobs.map((job) => job.handle) : [...HANDLES];
  const picked = op.picks.map((pick) => candidates[pick % candidates.length]!);
  return [...new Set(picked), ...(op.stray ? ["never-reserved"] : [])];
}

function stepOutcome(step: Step): Outcome {
  return step.ok ? { ok: true } : failed(step.code ?? "unknown");
}

function notFoundEverywhere() {
  const missing = failed("not_found");
  return {
    view: missing,
    inbox: missing,
    messages: missing,
    jobs: missing,
    pulls: Object.fromEntries(HANDLES.map((h) => [h, missing])),
  };
}

function messageShape(message: ReturnType<typeof messageView>) {
  const { created_at: _created, ...rest } = message;
  return rest;
}

/** Every stored time of the session, `ms` earlier: the same as its clock moving `ms` ahead. */
function shiftTimes(sql: SqlStorage, ms: number): void {
  const shift = (column: string) => `${column} = ${column} - ${ms}`;
  // Only the times a JSON column holds move: a field its state does not have stays absent.
  const shiftJson = (text: string | null, fields: string[]): string | null => {
    if (text === null) return null;
    const value = JSON.parse(text) as Record<string, unknown>;
    for (const field of fields) {
      const time = value[field];
      if (typeof time === "number") value[field] = time - ms;
    }
    return JSON.stringify(value);
  };
  sql.exec(`UPDATE jobs SET ${shift("reserved_at")}, ${shift("completed_at")}`);
  sql.exec(`UPDATE inbox SET ${shift("lease_expires_at")}, ${shift("acked_at")}`);
  sql.exec(`UPDATE purged SET ${shift("purged_at")}`);
  sql.exec(`UPDATE messages SET ${shift("created_at")}`);
  const row = sql
    .exec<{ run: string | null; wait: string | null; resume: string | null }>(
      "SELECT run, wait, resume FROM session",
    )
    .toArray()[0];
  if (row === undefined) return;
  sql.exec(
    `UPDATE session SET ${shift("created_at")}, run = ?, wait = ?, resume = ?`,
    shiftJson(row.run, ["registeredAt"]),
    shiftJson(row.wait, ["since", "ceilingAt"]),
    shiftJson(row.resume, [
      "createdAt",
      "nextAttemptAt",
      "lastAttemptAt",
      "deliveredAt",
      "endedAt",
    ]),
  );
}
