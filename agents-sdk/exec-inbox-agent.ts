// An Agents SDK agent that runs long shell commands through exec-inbox: the exec tools for its
// model, the wake exec-inbox calls through a service binding, and the turn loop that puts each
// inbox envelope into the conversation exactly once. The model, the runner and the exec-inbox
// client are the subclass's (`execInbox()`); the conversation lives in the agent's own SQLite.

import { retrying } from "@exec-inbox/ai-sdk/retry";
import { ExecInboxError, type ResumePayload } from "@exec-inbox/client";
import { Agent } from "agents";
import { Conversation } from "./conversation";
import { endTurn, modelTurnWithRetries, type TurnContext } from "./model-turn";
import { foldJournal, recoverStoredCalls } from "./recovery";
import {
  conflict,
  type ExecInboxSettings,
  gone,
  handlesOf,
  ModelTurnError,
  modelMessageOf,
  type WakeAnswer,
} from "./settings";

export { type ExecInboxSettings, ModelTurnError, type WakeAnswer } from "./settings";

/** Backoff of the durable retries of a stored run (Agents SDK schedule): 2 s doubling, ≤ 5 min. */
const retryDelaySeconds = (attempt: number): number => Math.min(300, 2 ** Math.min(attempt, 9));
const MAX_ROUNDS = 8;

export abstract class ExecInboxAgent<
  Env extends Cloudflare.Env = Cloudflare.Env,
  State = unknown,
> extends Agent<Env, State> {
  /** The model, the runner and exec-inbox, built from `this.env`. */
  protected abstract execInbox(): ExecInboxSettings;

  private store: Conversation | null = null;
  /** The turn loop in progress in this instance: a wake that lands meanwhile waits for it. */
  private driving: Promise<string> | null = null;
  /** Turns and recovery, one at a time: both write the journal and the conversation. */
  private exclusive: Promise<unknown> = Promise.resolve();

  private oneAtATime<T>(task: () => Promise<T>): Promise<T> {
    const next = this.exclusive.then(task, task);
    this.exclusive = next.catch(() => {});
    return next;
  }

  protected get conversation(): Conversation {
    this.store ??= new Conversation(this.ctx.storage);
    return this.store;
  }

  /** The agent's name is the exec-inbox session id. */
  protected get sessionId(): string {
    return this.name;
  }

  /** A subclass that overrides onStart calls super.onStart(): a run cut off by a restart goes on. */
  override async onStart(): Promise<void> {
    const run = this.conversation.state().activeRun;
    if (run !== null && run.registered !== false) this.driveInBackground();
  }

  /**
   * The model's conversation so far (runtime messages included), as JSON text: the RPC stub type
   * of ModelMessage[] is too deep for tsc to instantiate.
   */
  transcript(): string {
    return JSON.stringify(this.conversation.messages());
  }

  /**
   * exec-inbox woke this session (through the binding's entrypoint). Registering a run for the
   * resume takes it; the turns then run in the background, so the wake answers at once. A resume
   * already taken, replaced or replayed is inert, and so is another tenant's. Nothing here touches
   * the conversation before exec-inbox accepted the resume: a wake names a lifetime, and only a
   * registered run proves it is the session's current one.
   */
  async wakeFromInbox(resume: ResumePayload): Promise<WakeAnswer> {
    const { inbox, tenant = "default" } = this.execInbox();
    // Another tenant's session with this id, woken through the same binding: not this agent's.
    if (resume.tenant !== tenant) return { taken: false, reason: "foreign" };
    if (this.driving !== null) await this.driving.catch(() => "");
    const conversation = this.conversation;
    if (conversation.hasSeenResume(resume.resume_id)) return { taken: false, reason: "duplicate" };
    // Derived from the resume: a redelivery after a lost answer registers the same run again.
    let runId = `run-${resume.resume_id}`;
    try {
      await retrying(() =>
        inbox.registerRun(this.sessionId, { run_id: runId, resume_id: resume.resume_id }),
      );
    } catch (error) {
      if (gone(error)) return { taken: false, reason: "gone" };
      if (conflict(error, "invalid_transition")) {
        // Remembered only for this lifetime's conversation; the state itself is left as it is.
        if (conversation.state().lifetime === resume.lifetime) {
          conversation.commit({ state: conversation.state(), resumeId: resume.resume_id });
        }
        return { taken: false, reason: "stale" };
      }
      if (!conflict(error, "run_conflict")) throw error;
      // Registered before a crash, not yet recorded here: adopt that run.
      const view = await inbox.getSession(this.sessionId);
      if (view.run === null || view.run.resume_id !== resume.resume_id) {
        return { taken: false, reason: "busy" };
      }
      runId = view.run.run_id;
    }
    // exec-inbox took the resume: its lifetime is the session's current one.
    this.adoptLifetime(resume.lifetime);
    conversation.commit({
      state: {
        ...conversation.state(),
        lifetime: resume.lifetime,
        activeRun: { runId, resumeId: resume.resume_id },
      },
      resumeId: resume.resume_id,
    });
    this.driveInBackground();
    return { taken: true, runId };
  }

  /** A human message: one run, its turns, and the model's answer. */
  async prompt(text: string): Promise<string> {
    if (this.driving !== null) await this.driving.catch(() => "");
    const conversation = this.conversation;
    const stored = conversation.state().activeRun;
    // A run left by a failure (its durable retry not yet due): it goes first.
    if (stored !== null && stored.registered !== false) await this.drive();
    const { inbox } = this.execInbox();
    // Stored before it is registered: a lost answer is retried with the same id, never a second run.
    const pending = conversation.state().activeRun;
    const runId =
      pending !== null && pending.registered === false && pending.resumeId === null
        ? pending.runId
        : `run-${crypto.randomUUID()}`;
    conversation.commit({
      state: { ...conversation.state(), activeRun: { runId, resumeId: null, registered: false } },
    });
    try {
      await retrying(() => inbox.registerRun(this.sessionId, { run_id: runId }));
    } catch (error) {
      // Refused (another run is active, the session is gone): nothing was registered.
      if (error instanceof ExecInboxError && error.problem.status < 500) {
        conversation.commit({ state: { ...conversation.state(), activeRun: null } });
      }
      throw error;
    }
    // The lifetime the run was registered in, learned at every prompt: after a delete and a
    // re-create the old conversation is no more, and the human's message starts the new one.
    const view = await retrying(() => inbox.getSession(this.sessionId));
    this.adoptLifetime(view.lifetime);
    conversation.commit({
      state: {
        ...conversation.state(),
        lifetime: view.lifetime,
        activeRun: { runId, resumeId: null },
        turnOwed: true,
      },
      messages: [{ role: "user", content: text }],
    });
    return this.drive();
  }

  /**
   * The Agents SDK's scheduler calls this: a stored run that failed (exec-inbox unreachable, a
   * refusal beyond retrying) is driven again, with a longer wait after each failure.
   */
  async retryStoredRun(payload: { attempt: number }): Promise<void> {
    const run = this.conversation.state().activeRun;
    if (run === null || run.registered === false) return;
    await this.drive(payload.attempt).catch(() => "");
  }

  /** A new lifetime confirmed by exec-inbox: the old lifetime's conversation goes. */
  private adoptLifetime(lifetime: string): void {
    const state = this.conversation.state();
    if (state.lifetime !== null && state.lifetime !== lifetime) {
      const run = state.activeRun;
      this.conversation.reset(lifetime);
      // The run just registered (stored before the reset) is the new lifetime's.
      if (run !== null) {
        this.conversation.commit({ state: { ...this.conversation.state(), activeRun: run } });
      }
    }
  }

  private driveInBackground(): void {
    this.drive().catch((error: unknown) => this.log(`the woken run failed: ${String(error)}`));
  }

  /**
   * The turn loop, one at a time, kept alive (keepAliveWhile) so the object is not evicted
   * mid-turn. A failure other than the model's keeps the stored run and schedules its retry.
   */
  private drive(attempt = 0): Promise<string> {
    this.driving ??= this.keepAliveWhile(() => this.oneAtATime(() => this.turns()))
      .catch(async (error: unknown) => {
        if (!(error instanceof ModelTurnError) && this.conversation.state().activeRun !== null) {
          const delay = retryDelaySeconds(attempt + 1);
          this.log(`the run failed (${String(error)}); retrying in ${delay} s`);
          await this.schedule(delay, "retryStoredRun", { attempt: attempt + 1 });
        }
        throw error;
      })
      .finally(() => {
        this.driving = null;
      });
    return this.driving;
  }

  /** Claim → apply (one transaction) → model turn → store → ack, until nothing new; then end. */
  private async turns(): Promise<string> {
    const settings = this.execInbox();
    const { inbox, leaseMs = 60_000 } = settings;
    const conversation = this.conversation;
    const run = conversation.state().activeRun;
    if (run === null || run.registered === false) return "";
    let answer = "";
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const { claims } = await retrying(() =>
        inbox.claim(this.sessionId, { max: 16, lease_ms: leaseMs }),
      );
      const ids = claims.map((claim) => claim.envelope.id);
      const applied = conversation.applied(ids);
      const fresh = claims.filter((claim) => !applied.has(claim.envelope.id));
      let state = conversation.state();
      if (fresh.length === 0 && !state.turnOwed) {
        // Only envelopes applied before a crash came back: their turn is stored, so ack them.
        if (ids.length > 0) await retrying(() => inbox.ack(this.sessionId, { ids }));
        break;
      }
      if (fresh.length > 0) {
        const ended = new Set(fresh.flatMap(handlesOf));
        state = {
          ...state,
          running: state.running.filter((handle) => !ended.has(handle)),
          turnOwed: true,
        };
        // The messages and the ids that say they were applied, in one transaction.
        conversation.commit({
          state,
          messages: fresh.map(modelMessageOf),
          applied: fresh.map((claim) => claim.envelope.id),
        });
      }
      // Commands a failed attempt started still run (reserved and armed): the run waits for them.
      const started = new Set<string>();
      let turn: Awaited<ReturnType<typeof modelTurnWithRetries>>;
      try {
        turn = await modelTurnWithRetries(this.turnContext(), settings, state, started);
      } catch (error) {
        // The provider keeps failing: end the run (suspend on what still runs, else finish) so
        // the session is not left running with nobody to drive it. The claims stay unacked:
        // their lease ends and the next run reads them.
        this.log(`the model failed (${String(error)}); ending the run`);
        const ended = {
          ...conversation.state(),
          running: [...new Set([...state.running, ...started])],
          turnOwed: false,
        };
        await endTurn(this.turnContext(), inbox, ended, run.runId);
        conversation.commit({ state: { ...ended, activeRun: null } });
        // The calls the failed turn made go into the conversation now, before the next run's
        // own messages; when exec-inbox cannot be asked, the next turn folds them instead.
        await foldJournal(conversation, settings, this.sessionId).catch((foldError: unknown) => {
          this.log(`journaled calls left to the next turn (${String(foldError)})`);
        });
        throw new ModelTurnError(this.sessionId, error);
      }
      conversation.commit({
        state: { ...conversation.state(), running: turn.running, turnOwed: false },
        messages: turn.messages,
        journalDone: true,
      });
      answer = turn.text;
      // Acked only once the turn that read them is stored: a crash before it redelivers them.
      if (ids.length > 0) await retrying(() => inbox.ack(this.sessionId, { ids }));
    }
    await endTurn(this.turnContext(), inbox, conversation.state(), run.runId);
    conversation.commit({ state: { ...conversation.state(), activeRun: null } });
    return answer;
  }

  /**
   * Every tool call the stored conversation holds no result for gets one (recovery.ts): an
   * exec_command or write_stdin its job's truth from exec-inbox, a read a note to ask again.
   * Nothing is started or sent again. The turn loop does this by itself after a restart; a caller
   * that compacted the conversation calls it, and the next turn reads the results. It runs one at
   * a time with the turns; messages stored meanwhile stay.
   */
  recoverToolCalls(): Promise<number> {
    return this.oneAtATime(() =>
      recoverStoredCalls(this.conversation, this.execInbox(), this.sessionId),
    );
  }

  private turnContext(): TurnContext {
    return {
      conversation: this.conversation,
      sessionId: this.sessionId,
      log: (line) => this.log(line),
    };
  }

  private log(line: string): void {
    (this.execInbox().log ?? console.log)(`agent ${this.sessionId}: ${line}`);
  }
}
