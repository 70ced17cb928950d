// Random histories for the domain: commands, an interpreter over the pure rules, and the invariants
// of the product checked after every step. Shared by the pure property test and the storage one.
import fc from "fast-check";
import type { Ctx, Decision, Effect, Rule, Write } from "../../src/domain/decision";
import { nextDueAt, oldestRetained, recordDeliveryRule, tickRule } from "../../src/domain/delivery";
import { fail } from "../../src/domain/errors";
import { ackRule, claimRule } from "../../src/domain/inbox";
import { completionRule, reserveRule } from "../../src/domain/jobs";
import {
  appendRule,
  createRule,
  deleteSession,
  finishRule,
  registerRule,
  suspendRule,
} from "../../src/domain/session";
import type { JobResult } from "../../src/domain/state";
import {
  isResumePending,
  jobStatus,
  RESUME_REASONS,
  type Resume,
  type Session,
} from "../../src/domain/state";
import { pendingItems } from "./domain";
import { applyWrites, checkWrites, loadFor, overdueFor } from "./model-rows";

export const HANDLES = ["a", "b", "c", "d"] as const;

export type Command =
  | { t: "create" }
  | { t: "delete" }
  | { t: "reserve"; h: string }
  | { t: "register" }
  | { t: "finish" }
  | { t: "suspend"; hs: string[]; wake: "all" | "any"; ceilingMs: number | null }
  | { t: "complete"; h: string; variant: number; stale: boolean }
  | { t: "append"; text: string }
  | { t: "claim"; max: number; leaseMs: number }
  | { t: "ack"; n: number }
  | { t: "advance"; ms: number }
  | { t: "tick" }
  | { t: "deliver"; ok: boolean };

const handle = fc.constantFrom(...HANDLES);

export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.constant({ t: "create" as const }), weight: 2 },
  { arbitrary: fc.constant({ t: "delete" as const }), weight: 1 },
  { arbitrary: handle.map((h) => ({ t: "reserve" as const, h })), weight: 5 },
  { arbitrary: fc.constant({ t: "register" as const }), weight: 3 },
  { arbitrary: fc.constant({ t: "finish" as const }), weight: 2 },
  {
    arbitrary: fc.record({
      t: fc.constant("suspend" as const),
      hs: fc.uniqueArray(handle, { minLength: 1, maxLength: 3 }),
      wake: fc.constantFrom("all" as const, "any" as const),
      ceilingMs: fc.option(fc.integer({ min: 1000, max: 120_000 }), { nil: null }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("complete" as const),
      h: handle,
      variant: fc.integer({ min: 0, max: 4 }),
      stale: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
    }),
    weight: 8,
  },
  {
    arbitrary: fc.string({ maxLength: 8 }).map((text) => ({ t: "append" as const, text })),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("claim" as const),
      max: fc.integer({ min: 1, max: 4 }),
      leaseMs: fc.integer({ min: 1000, max: 60_000 }),
    }),
    weight: 3,
  },
  { arbitrary: fc.integer({ min: 1, max: 4 }).map((n) => ({ t: "ack" as const, n })), weight: 2 },
  {
    arbitrary: fc.integer({ min: 1, max: 400_000 }).map((ms) => ({ t: "advance" as const, ms })),
    weight: 4,
  },
  { arbitrary: fc.constant({ t: "tick" as const }), weight: 4 },
  { arbitrary: fc.boolean().map((ok) => ({ t: "deliver" as const, ok })), weight: 4 },
);

export const CONFIG: Ctx["config"] = {
  waitCeilingMs: 90_000,
  jobRetentionMs: 600_000,
  resumeMaxAttempts: 3,
  resumeClaimTimeoutMs: 120_000,
  resumeWebhookUrl: "http://hooks.test/resume",
  resumeUrlAllowlist: ["http://hooks.test"],
  resumeBindingAllowlist: [],
};

/** Variant 4 repeats variant 0 but as `observed`; the others are different results. */
export function resultOf(variant: number): { result: JobResult; observed: boolean } {
  const base = { outputTruncated: false, endedBy: "process" as const };
  switch (variant) {
    case 1:
      return {
        result: { ...base, status: "failed", exitCode: 2, output: "bad", outputBytesTotal: 3 },
        observed: false,
      };
    case 2:
      return {
        result: {
          ...base,
          status: "lost",
          exitCode: null,
          output: "",
          outputBytesTotal: 0,
          endedBy: "runner_shutdown",
        },
        observed: false,
      };
    case 4:
      return {
        result: { ...base, status: "completed", exitCode: 0, output: "ok", outputBytesTotal: 2 },
        observed: true,
      };
    default:
      return {
        result: { ...base, status: "completed", exitCode: 0, output: "ok", outputBytesTotal: 2 },
        observed: false,
      };
  }
}

export interface Step {
  readonly command: Command;
  readonly before: Session | null;
  readonly after: Session | null;
  /** The row writes the step's decision returned (none for a refusal or a no-op). */
  readonly writes: readonly Write[];
  readonly ok: boolean;
  readonly code?: string;
}

/** The model: what the product promised so far, to hold the state against. */
export class History {
  state: Session | null = null;
  now = 1_700_000_000_000;
  private lifetimes = 0;
  private ids = 0;
  private runId: string | null = null;
  private oldLifetime: string | null = null;
  messages: string[] = [];
  /** Handles whose result was admitted to the inbox in this lifetime. */
  admitted = new Set<string>();
  /** Reservations per handle in this lifetime: a handle reserved again after a purge is a new job. */
  reservations = new Map<string, number>();
  acked = new Set<string>();
  private pendingEffects: Effect[] = [];
  readonly resumeIds = new Set<string>();
  readonly steps: Step[] = [];

  private ctx(): Ctx {
    return { now: this.now, config: CONFIG };
  }

  private id(prefix: string): string {
    this.ids += 1;
    return `${prefix}-${this.ids}`;
  }

  /**
   * Decides as the session object does: the rule is given only the rows its needs name (fenced,
   * so reading another throws), its writes must make exactly the rows it returned, and the model
   * moves by those writes applied to all its rows.
   */
  private decide<C, T>(rule: Rule<C, T>, cmd: C): Decision<T> {
    const s = this.state;
    const ctx = this.ctx();
    if (s === null) return rule.absent?.(cmd, ctx) ?? fail("not_found", "no such session");
    const needs = rule.needs(s, cmd, this.now);
    const given = loadFor(s, needs, this.now);
    const decision = rule.decide(
      {
        session: given,
        overdue: overdueFor(s, needs, this.now),
        retainedSince: oldestRetained(s),
        pending: () => {
          if (needs.pending !== true) throw new Error("a rule read pending without needing it");
          return pendingItems(s, this.now);
        },
      },
      cmd,
      ctx,
    );
    if (!decision.ok || decision.state === null) return decision;
    checkWrites(given, decision.state, decision.writes);
    const rows = applyWrites(s, decision.writes);
    const { messages, jobs, inbox, purged, finishedRuns } = rows;
    return {
      ...decision,
      state: { ...decision.state, messages, jobs, inbox, purged, finishedRuns },
    };
  }

  private apply<T>(command: Command, decision: Decision<T>): Decision<T> {
    const before = this.state;
    if (decision.ok) {
      this.state = decision.state;
      this.pendingEffects.push(...decision.effects);
    }
    this.steps.push({
      command,
      before,
      after: this.state,
      writes: decision.ok ? decision.writes : [],
      ok: decision.ok,
      code: decision.ok ? undefined : decision.code,
    });
    return decision;
  }

  run(command: Command): Step {
    const s = this.state;
    const stepsBefore = this.steps.length;
    switch (command.t) {
      case "create": {
        const fresh = s === null;
        this.lifetimes += 1;
        const decision = this.apply(
          command,
          this.decide(createRule, {
            tenant: "default",
            id: "s",
            lifetime: `lt-${this.lifetimes}`,
            resumeUrl: null,
            resumeBinding: null,
            metadata: {},
          }),
        );
        if (decision.ok && fresh) this.resetLifetime();
        break;
      }
      case "delete": {
        const decision = this.apply(command, deleteSession(s));
        if (decision.ok && s !== null) {
          this.oldLifetime = s.lifetime;
          this.resetLifetime();
        }
        break;
      }
      case "reserve":
        if (s) {
          const decision = this.apply(
            command,
            this.decide(reserveRule, {
              handle: command.h,
              command: `run ${command.h}`,
              heartbeatTimeoutMs: null,
              timeoutNamed: false,
              mint: () => "t",
            }),
          );
          if (decision.ok && decision.value.created) {
            this.reservations.set(command.h, (this.reservations.get(command.h) ?? 0) + 1);
          }
        }
        break;
      case "register": {
        const runId = this.id("run");
        if (s) {
          const decision = this.apply(
            command,
            this.decide(registerRule, { runId, resumeId: null }),
          );
          if (decision.ok && s.run === null) this.runId = runId;
        }
        break;
      }
      case "finish":
        if (s && this.runId) {
          const decision = this.apply(
            command,
            this.decide(finishRule, { runId: this.runId, resumeId: this.id("rs") }),
          );
          if (decision.ok) this.runId = null;
        }
        break;
      case "suspend":
        if (s && this.runId) {
          const decision = this.apply(
            command,
            this.decide(suspendRule, {
              runId: this.runId,
              handles: command.hs,
              wake: command.wake,
              ceilingMs: command.ceilingMs,
              resumeId: this.id("rs"),
            }),
          );
          if (decision.ok) this.runId = null;
        }
        break;
      case "complete": {
        const { result, observed } = resultOf(command.variant);
        const lifetime = command.stale
          ? (this.oldLifetime ?? "lt-never")
          : (s?.lifetime ?? "lt-none");
        const decision = this.apply(
          command,
          this.decide(completionRule, {
            lifetime,
            handle: command.h,
            tokenSeq: s?.jobs[command.h]?.seq ?? null,
            result,
            observed,
            resumeId: this.id("rs"),
          }),
        );
        if (
          decision.ok &&
          decision.value.outcome === "accepted" &&
          decision.value.disposition !== "observed"
        ) {
          this.admitted.add(command.h);
        }
        break;
      }
      case "append":
        if (s) {
          const decision = this.apply(
            command,
            this.decide(appendRule, { role: "user", content: command.text, metadata: {} }),
          );
          if (decision.ok) this.messages.push(command.text);
        }
        break;
      case "claim":
        if (s)
          this.apply(
            command,
            this.decide(claimRule, { max: command.max, leaseMs: command.leaseMs }),
          );
        break;
      case "ack":
        if (s) {
          const ids = Object.values(s.inbox)
            .filter((item) => item.state === "claimed")
            .slice(0, command.n)
            .map((item) => item.envelope.id);
          for (const item of Object.values(s.inbox))
            if (ids.includes(item.envelope.id)) this.acked.add(item.envelope.correlation_id);
          this.apply(command, this.decide(ackRule, { ids }));
        }
        break;
      case "advance":
        this.now += command.ms;
        break;
      case "tick":
        // The alarm: runs only when something is due, like the shell; running it twice is harmless.
        if (
          s &&
          (nextDueAt(s, oldestRetained(s), this.ctx()) ?? Number.POSITIVE_INFINITY) <= this.now
        ) {
          this.apply(command, this.decide(tickRule, { resumeId: this.id("rs") }));
        }
        break;
      case "deliver": {
        const effect = this.pendingEffects.shift();
        if (s && effect) {
          this.apply(
            command,
            this.decide(recordDeliveryRule, {
              resumeId: effect.payload.resume_id,
              lifetime: effect.payload.lifetime,
              delivered: command.ok,
              error: command.ok ? null : "500",
              random: 0.5,
              event: {
                type: "delivery",
                resume_id: effect.payload.resume_id,
                attempt: effect.attempt,
                status: command.ok ? 200 : 500,
                error: command.ok ? null : "500",
                duration_ms: 0,
              },
            }),
          );
        }
        break;
      }
    }
    const last = this.steps.at(-1);
    if (this.steps.length === stepsBefore || last === undefined) {
      // The command did not apply here (no session, no run, nothing due): a step that changes nothing.
      const noop = { command, before: this.state, after: this.state, writes: [], ok: true };
      this.steps.push(noop);
      return noop;
    }
    return last;
  }

  private resetLifetime(): void {
    this.messages = [];
    this.admitted = new Set();
    this.reservations = new Map();
    this.acked = new Set();
    this.runId = null;
    this.pendingEffects = [];
  }
}

/** Throws with a readable reason when a step broke a promise of the product. */
export function checkInvariants(history: History, step: Step): void {
  const fail = (why: string) => {
    throw new Error(`${why}\nafter ${JSON.stringify(step.command)}`);
  };
  const { before, after } = step;
  if (!step.ok && before !== after) fail("a rejected command changed the state");
  if (step.command.t === "complete" && step.command.stale && step.ok) {
    fail("a completion of an old lifetime was accepted");
  }
  const s = history.state;
  if (s === null) return;

  // No message lost or reordered.
  const contents = s.messages.map((message) => message.content);
  if (JSON.stringify(contents) !== JSON.stringify(history.messages))
    fail("messages differ from what was appended");
  if (s.messages.some((message, index) => message.index !== index))
    fail("message indexes are not dense");

  // Nothing of another lifetime.
  for (const job of Object.values(s.jobs))
    if (job.lifetime !== s.lifetime) fail(`job ${job.handle} of another lifetime`);

  // Every admitted completion is in the inbox exactly once (or was acked and then purged); a
  // handle reserved again after its purge may have one item per reservation.
  for (const handle of history.admitted) {
    const items = Object.values(s.inbox).filter(
      (item) =>
        item.envelope.correlation_id === handle &&
        item.envelope.body.instruction !== "background_exec_wait_expired",
    );
    const allowed = history.reservations.get(handle) ?? 1;
    if (items.length > allowed)
      fail(`completion of ${handle} is in the inbox ${items.length} times`);
    if (items.length === 0 && !history.acked.has(handle)) fail(`completion of ${handle} was lost`);
  }
  const generations = Object.values(s.inbox).map((item) => item.envelope.generation);
  if (new Set(generations).size !== generations.length) fail("two envelopes share a generation");

  // One resume per wake: a new resume only once the previous one ended; every resume has a reason.
  const previous: Resume | null = before?.lifetime === s.lifetime ? (before?.resume ?? null) : null;
  if (s.resume !== null) {
    if (!RESUME_REASONS.includes(s.resume.reason)) fail("a resume without a valid reason");
    if (previous !== null && previous.resumeId !== s.resume.resumeId && isResumePending(previous)) {
      fail("a second resume was created while the first was still pending");
    }
    if (s.resume.attempts > CONFIG.resumeMaxAttempts) fail("more delivery attempts than allowed");
    if (previous?.resumeId !== s.resume.resumeId) {
      if (history.resumeIds.has(s.resume.resumeId)) fail("a resume id was reused");
      history.resumeIds.add(s.resume.resumeId);
    }
  }

  // Never suspended with every waited job terminal.
  if (s.wait !== null) {
    if (s.wait.handles.length === 0) fail("an armed wait with no handle");
    for (const handle of s.wait.handles) {
      const job = s.jobs[handle];
      if (job === undefined || jobStatus(job) !== "running")
        fail(`the wait holds ${handle}, which is not running`);
    }
  }
}
