// The state a lockstep run keeps about both sides (names that pair the model's lifetimes, tokens
// and envelopes with the object's), and everything a client can observe of each, in one shape.
import { abortAllDurableObjects } from "cloudflare:test";
import type { Ctx, Decision } from "../../src/domain/decision";
import type { Claim } from "../../src/domain/inbox";
import { pullJob } from "../../src/domain/jobs";
import { jobSummaryView, jobView, messageView, sessionView } from "../../src/domain/view";
import type { SessionObject } from "../../src/session-object/session-object";
import { stubOf } from "./api";
import { inboxCounts } from "./domain";
import { History, type Command as HistoryCommand, type Step } from "./history";
import { CONFIG, HANDLES } from "./lockstep-commands";
import {
  failed,
  messageShape,
  notFoundEverywhere,
  type ObjectApi,
  outcome,
  PENDING_RESUME_STATES,
  type Side,
  type Token,
} from "./lockstep-outcomes";
import { inObject } from "./lockstep-storage";

export abstract class LockstepObserver {
  readonly history = new History();
  protected realRunId: string | null = null;
  /** Model lifetime (`lt-1` …) ⇄ the object's lifetime. */
  protected readonly realLifetimeOf = new Map<string, string>();
  protected readonly modelLifetimeOf = new Map<string, string>();
  /** Callback tokens handed out, per model lifetime and handle, in reservation order. */
  protected readonly tokens = new Map<string, Token[]>();
  /** Model lifetimes that ended, the latest last. */
  protected readonly ended: string[] = [];
  /** Envelope ids: the model's (content-derived from its lifetime names) ⇄ the object's. */
  protected readonly realEnvelopeOf = new Map<string, string>();
  protected readonly modelEnvelopeOf = new Map<string, string>();
  /** Handles reserved again after a purge in this lifetime (History's once-only check predates that). */
  protected readonly reused = new Set<string>();
  /**
   * A suspend that finds results of different reasons already there wakes for the latest of them;
   * the object orders them by its clock, which can tie within a millisecond: either reason is right.
   */
  protected reasonAmbiguous = false;
  protected readonly lastResume: Record<Side, string | null> = { model: null, real: null };
  protected ids = 0;
  readonly trace: string[] = [];

  protected constructor(readonly sid: string) {}

  /** One stub per incarnation of the object: a restart drops it, and the next call makes a new one. */
  protected cachedStub: DurableObjectStub<SessionObject> | null = null;
  protected get rawStub(): DurableObjectStub<SessionObject> {
    this.cachedStub ??= stubOf(this.sid);
    return this.cachedStub;
  }
  protected get stub(): ObjectApi {
    return this.rawStub;
  }
  protected async restart(): Promise<void> {
    await abortAllDurableObjects();
    this.cachedStub = null;
  }

  protected id(prefix: string): string {
    this.ids += 1;
    return `${prefix}-driver-${this.ids}`;
  }

  protected ctx(): Ctx {
    return { now: this.history.now, config: CONFIG };
  }

  protected get lifetime(): string | null {
    return this.history.state?.lifetime ?? null;
  }

  /** Applies a decision to the model the way History does, and records the step. */
  protected applyModel<T>(command: HistoryCommand, decision: Decision<T>): Step {
    const before = this.history.state;
    if (decision.ok) this.history.state = decision.state;
    const step: Step = {
      command,
      before,
      after: this.history.state,
      writes: decision.ok ? decision.writes : [],
      ok: decision.ok,
      code: decision.ok ? undefined : decision.code,
    };
    this.history.steps.push(step);
    return step;
  }

  // ---- observations ------------------------------------------------------------------------

  protected realLifetimeName(lifetime: string): string {
    return this.modelLifetimeOf.get(lifetime) ?? `unknown lifetime ${lifetime}`;
  }

  protected jobShape(
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
  protected pairEnvelopes(model: readonly Claim[], real: readonly Claim[]): void {
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

  protected envelopeName(id: string, side: Side): string {
    if (side === "model") return id;
    return this.modelEnvelopeOf.get(id) ?? `unpaired ${id}`;
  }

  protected claimShape(entry: Claim, side: Side) {
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

  protected viewShape(view: ReturnType<typeof sessionView>, side: Side, runId: string | null) {
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

  protected observeModel() {
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
          sessionView(
            s,
            {
              inbox: { pending: counts.pending, claimed: counts.claimed },
              jobs: { running: running.length, done: done.length },
              // The model names no runner: its commands never set one.
              runnerUrl: null,
            },
            // The shape leaves `wake` out: it follows the pool's settings, not the history.
            null,
          ),
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

  protected async observeReal() {
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
