// An Agents SDK agent that runs long shell commands through exec-inbox: the exec tools for its
// model, the wake exec-inbox calls through a service binding, and the turn loop that puts each
// inbox envelope into the conversation exactly once. The model, the runner and the exec-inbox
// client are the subclass's (`execInbox()`); the conversation lives in the agent's own SQLite.

import { execTools, trackingContext } from "@exec-inbox/ai-sdk/exec-tools";
import { aiSdkToolCallFormat } from "@exec-inbox/ai-sdk/open-tool-calls";
import {
  journalEntry,
  type RecoveredToolCall,
  recoverOpenCalls,
  recoverToolCalls,
} from "@exec-inbox/ai-sdk/recover-tool-calls";
import { retrying } from "@exec-inbox/ai-sdk/retry";
import type { RunnerClient } from "@exec-inbox/ai-sdk/runner-client";
import { aiSdkRecoveredMessages, DEFAULT_SYSTEM } from "@exec-inbox/ai-sdk/turn-engine";
import {
  type Claim,
  type ExecInboxClient,
  ExecInboxError,
  type ResumePayload,
} from "@exec-inbox/client";
import { Agent } from "agents";
import { generateText, type LanguageModel, type ModelMessage, stepCountIs } from "ai";
import { Conversation, type ConversationState } from "./conversation";

export interface ExecInboxSettings {
  /** exec-inbox, usually over a service binding: `new ExecInboxClient({fetch: (r) => env.EXEC_INBOX.fetch(r), …})`. */
  readonly inbox: ExecInboxClient;
  readonly runner: RunnerClient;
  readonly model: LanguageModel;
  readonly system?: string;
  readonly maxSteps?: number;
  /** How long a claim holds the envelopes while the turn runs (default 60 s). */
  readonly leaseMs?: number;
  readonly heartbeatTimeoutMs?: number;
  /**
   * The exec-inbox tenant whose sessions this agent serves (default "default"). A binding allowed
   * for several tenants receives all their wakes; a wake for another tenant is inert ("foreign").
   */
  readonly tenant?: string;
  /** Model calls per turn before the turn is given up and the run ended (default 3). */
  readonly modelAttempts?: number;
  readonly log?: (line: string) => void;
}

/** What a wake came to; any answer is a delivery for exec-inbox (only a throw is retried). */
export type WakeAnswer =
  | { readonly taken: true; readonly runId: string }
  | {
      readonly taken: false;
      readonly reason: "duplicate" | "stale" | "busy" | "gone" | "foreign";
    };

const MAX_ROUNDS = 8;
/** suspend takes at most 64 handles: a wait on the first 64 (`all`) wakes when they end. */
const MAX_WAIT_HANDLES = 64;
/** Backoff of the durable retries of a stored run (Agents SDK schedule): 2 s doubling, ≤ 5 min. */
const retryDelaySeconds = (attempt: number): number => Math.min(300, 2 ** Math.min(attempt, 9));

/** The model failed on every attempt: the run was ended, the human's turn not taken. */
export class ModelTurnError extends Error {
  constructor(sessionId: string, cause: unknown) {
    super(`session ${sessionId}: the model failed: ${String(cause)}`, { cause });
    this.name = "ModelTurnError";
  }
}

const conflict = (error: unknown, code: string): boolean =>
  error instanceof ExecInboxError && error.problem.code === code;
const gone = (error: unknown): boolean =>
  error instanceof ExecInboxError && (error.problem.status === 404 || error.problem.status === 410);

/** The handles an envelope ends for the model: completed, outcome unknown, wait expired. */
const handlesOf = (claim: Claim): string[] => {
  const data = claim.envelope.body.data as { session_id?: string; handles?: string[] };
  return data.handles ?? (data.session_id === undefined ? [] : [data.session_id]);
};

/** The hidden runtime message as the model reads it, naming the envelope it came from. */
const modelMessageOf = (claim: Claim): ModelMessage => ({
  role: "user",
  content: claim.provider_message.content,
  providerOptions: {
    execInbox: {
      id: claim.provider_message.id,
      hidden_from_ui: claim.provider_message.metadata.hidden_from_ui,
      runtime_kind: claim.provider_message.metadata.runtime_kind,
    },
  },
});

export abstract class ExecInboxAgent<
  Env extends Cloudflare.Env = Cloudflare.Env,
  State = unknown,
> extends Agent<Env, State> {
  /** The model, the runner and exec-inbox, built from `this.env`. */
  protected abstract execInbox(): ExecInboxSettings;

  private store: Conversation | null = null;
  /** The turn loop in progress in this instance: a wake that lands meanwhile waits for it. */
  private driving: Promise<string> | null = null;

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
    this.driving ??= this.keepAliveWhile(() => this.turns())
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
      let turn: Awaited<ReturnType<typeof this.modelTurn>>;
      try {
        turn = await this.modelTurnWithRetries(settings, state, started);
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
        await this.endTurn(inbox, ended, run.runId);
        conversation.commit({ state: { ...ended, activeRun: null } });
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
    await this.endTurn(inbox, conversation.state(), run.runId);
    conversation.commit({ state: { ...conversation.state(), activeRun: null } });
    return answer;
  }

  /** The AI SDK retries retryable API errors itself; this also covers the rest. */
  private async modelTurnWithRetries(
    settings: ExecInboxSettings,
    state: ConversationState,
    started: Set<string>,
  ) {
    const attempts = settings.modelAttempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.modelTurn(settings, state, started);
      } catch (error) {
        if (attempt >= attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** (attempt - 1)));
      }
    }
  }

  /**
   * Every exec_command call the stored conversation holds no result for gets one from exec-inbox:
   * still running (handle, last progress), finished (the stored result) or unknown. Nothing is
   * started again. The turn loop does this by itself after a restart; a caller that compacted the
   * conversation calls it, once no turn runs, and the next turn reads the results.
   */
  async recoverToolCalls(): Promise<number> {
    if (this.driving !== null) await this.driving.catch(() => "");
    const journaled = await this.foldJournal();
    const conversation = this.conversation;
    const messages = conversation.messages();
    const open = aiSdkToolCallFormat.openCalls(messages);
    if (open.length === 0) return journaled.length;
    const { inbox } = this.execInbox();
    const handles = conversation.callHandles();
    const recovered = await recoverOpenCalls(inbox, this.sessionId, open, handles);
    const stillRunning = recovered.flatMap((call) => (call.running === null ? [] : [call.running]));
    const state = conversation.state();
    conversation.commit({
      state: {
        ...state,
        running: [...new Set([...state.running, ...stillRunning])],
        turnOwed: true,
      },
      messages: aiSdkToolCallFormat.close(messages, recovered),
      replace: true,
    });
    return journaled.length + recovered.length;
  }

  /**
   * The journaled exec_command calls of an attempt that never stored its turn (the object was
   * restarted, or the provider failed midway) go into the conversation with exec-inbox's result
   * for each, in one transaction with emptying the journal: the model reads them, nothing reruns.
   * Returns the handles of those still running.
   */
  private async foldJournal(): Promise<RecoveredToolCall[]> {
    const conversation = this.conversation;
    const journal = conversation.journal();
    if (journal.length === 0) return [];
    const { inbox } = this.execInbox();
    const recovered = await recoverToolCalls(inbox, this.sessionId, journal);
    const stillRunning = recovered.flatMap((call) => (call.running === null ? [] : [call.running]));
    const state = conversation.state();
    conversation.commit({
      state: {
        ...state,
        running: [...new Set([...state.running, ...stillRunning])],
        turnOwed: true,
      },
      messages: aiSdkRecoveredMessages(recovered),
      journalDone: true,
    });
    this.log(`recovered ${recovered.length} tool calls without a result`);
    return recovered;
  }

  private async modelTurn(
    settings: ExecInboxSettings,
    state: ConversationState,
    started: Set<string>,
  ) {
    for (const call of await this.foldJournal())
      if (call.running !== null) started.add(call.running);
    const running = new Set([...state.running, ...started]);
    const conversation = this.conversation;
    let journal = conversation.journal();
    const write = (toolCallId: string, change: Parameters<typeof journalEntry>[2]) => {
      journal = journalEntry(journal, toolCallId, change);
      const call = journal.find((entry) => entry.toolCallId === toolCallId);
      if (call !== undefined) conversation.journalCall(call);
      return Promise.resolve();
    };
    const result = await generateText({
      model: settings.model,
      instructions: settings.system ?? DEFAULT_SYSTEM,
      messages: conversation.messages(),
      tools: execTools({
        ...trackingContext({ ...settings, sessionId: this.sessionId }, running, started),
        journal: {
          begin: (toolCallId, input) => write(toolCallId, { input }),
          handed: (toolCallId, handle) => write(toolCallId, { handle }),
          answered: (toolCallId, answer) => write(toolCallId, { answer }),
        },
      }),
      stopWhen: stepCountIs(settings.maxSteps ?? 8),
    });
    return { messages: result.responseMessages, running: [...running], text: result.text };
  }

  /** Commands still running: wait for them (a wait that already covers them stays); else finish. */
  private async endTurn(
    inbox: ExecInboxClient,
    state: ConversationState,
    runId: string,
  ): Promise<void> {
    const ended = async (call: () => Promise<unknown>) => {
      try {
        await retrying(call);
      } catch (error) {
        // Ended already (before a restart): the run is no longer active.
        if (!conflict(error, "invalid_transition")) throw error;
      }
    };
    if (state.running.length > 0) {
      // At most 64 handles a wait: `all` of the first 64 wakes the agent, which waits on the rest.
      const waitFor = state.running.slice(0, MAX_WAIT_HANDLES);
      const armed = (await retrying(() => inbox.getSession(this.sessionId))).waiting_for_bash;
      const same =
        armed !== null &&
        armed.handles.length === waitFor.length &&
        waitFor.every((handle) => armed.handles.includes(handle));
      if (!same) {
        await ended(() =>
          inbox.suspend(this.sessionId, runId, { waiting_for: [...waitFor], wake: "all" }),
        );
        this.log(`suspended on ${waitFor.join(", ")}`);
        return;
      }
    }
    await ended(() => inbox.finishRun(this.sessionId, runId));
    this.log(`run ${runId} finished`);
  }

  private log(line: string): void {
    (this.execInbox().log ?? console.log)(`agent ${this.sessionId}: ${line}`);
  }
}
