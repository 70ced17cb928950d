// An Agents SDK agent that runs long shell commands through exec-inbox: the exec tools for its
// model, the wake exec-inbox calls through a service binding, and the turn loop that puts each
// inbox envelope into the conversation exactly once. The model, the runner and the exec-inbox
// client are the subclass's (`execInbox()`); the conversation lives in the agent's own SQLite.
import { Agent } from "agents";
import { generateText, type LanguageModel, type ModelMessage, stepCountIs } from "ai";
import { execTools } from "../agent/exec-tools";
import { retrying } from "../agent/retry";
import type { RunnerClient } from "../agent/runner-client";
import { type Claim, type ExecInboxClient, ExecInboxError, type ResumePayload } from "../client";
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
  readonly log?: (line: string) => void;
}

/** What a wake came to; any answer is a delivery for exec-inbox (only a throw is retried). */
export type WakeAnswer =
  | { readonly taken: true; readonly runId: string }
  | { readonly taken: false; readonly reason: "duplicate" | "stale" | "busy" | "gone" };

const MAX_ROUNDS = 8;
const DEFAULT_SYSTEM =
  "You operate a shell through exec_command and write_stdin. Long commands continue in the background; when one ends you get a runtime message, and you read its result with write_stdin.";

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
    if (this.conversation.state().activeRun !== null) void this.drive();
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
   * already taken, replaced or replayed is inert.
   */
  async wakeFromInbox(resume: ResumePayload): Promise<WakeAnswer> {
    if (this.driving !== null) await this.driving.catch(() => "");
    const conversation = this.conversation;
    if (conversation.hasSeenResume(resume.resume_id)) return { taken: false, reason: "duplicate" };
    let state = conversation.state();
    if (state.lifetime !== null && state.lifetime !== resume.lifetime) {
      // The session was deleted and created again: its old conversation is no more.
      conversation.reset(resume.lifetime);
      state = conversation.state();
    }
    const { inbox } = this.execInbox();
    let runId: string;
    try {
      runId = (
        await retrying(() => inbox.registerRun(this.sessionId, { resume_id: resume.resume_id }))
      ).run_id;
    } catch (error) {
      if (gone(error)) return { taken: false, reason: "gone" };
      if (conflict(error, "invalid_transition")) {
        conversation.commit({ state, resumeId: resume.resume_id });
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
    conversation.commit({
      state: {
        ...state,
        lifetime: resume.lifetime,
        activeRun: { runId, resumeId: resume.resume_id },
      },
      resumeId: resume.resume_id,
    });
    void this.drive().catch((error: unknown) => this.log(`the woken run failed: ${String(error)}`));
    return { taken: true, runId };
  }

  /** A human message: one run, its turns, and the model's answer. */
  async prompt(text: string): Promise<string> {
    if (this.driving !== null) await this.driving.catch(() => "");
    const { inbox } = this.execInbox();
    const { run_id: runId } = await retrying(() => inbox.registerRun(this.sessionId, {}));
    let state = this.conversation.state();
    if (state.lifetime === null) {
      state = { ...state, lifetime: (await inbox.getSession(this.sessionId)).lifetime };
    }
    this.conversation.commit({
      state: { ...state, activeRun: { runId, resumeId: null }, turnOwed: true },
      messages: [{ role: "user", content: text }],
    });
    return this.drive();
  }

  private drive(): Promise<string> {
    this.driving ??= this.turns().finally(() => {
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
    if (run === null) return "";
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
      const turn = await this.modelTurn(settings, state);
      conversation.commit({
        state: { ...conversation.state(), running: turn.running, turnOwed: false },
        messages: turn.messages,
      });
      answer = turn.text;
      // Acked only once the turn that read them is stored: a crash before it redelivers them.
      if (ids.length > 0) await retrying(() => inbox.ack(this.sessionId, { ids }));
    }
    await this.endTurn(inbox, conversation.state(), run.runId);
    conversation.commit({ state: { ...conversation.state(), activeRun: null } });
    return answer;
  }

  private async modelTurn(settings: ExecInboxSettings, state: ConversationState) {
    const running = new Set(state.running);
    const result = await generateText({
      model: settings.model,
      system: settings.system ?? DEFAULT_SYSTEM,
      messages: this.conversation.messages(),
      tools: execTools({
        inbox: settings.inbox,
        runner: settings.runner,
        sessionId: this.sessionId,
        onBackground: (handle) => running.add(handle),
        onEnded: (handle) => running.delete(handle),
        ...(settings.heartbeatTimeoutMs === undefined
          ? {}
          : { heartbeatTimeoutMs: settings.heartbeatTimeoutMs }),
      }),
      stopWhen: stepCountIs(settings.maxSteps ?? 8),
    });
    return { messages: result.response.messages, running: [...running], text: result.text };
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
      const armed = (await inbox.getSession(this.sessionId)).waiting_for_bash;
      const same =
        armed !== null &&
        armed.handles.length === state.running.length &&
        state.running.every((handle) => armed.handles.includes(handle));
      if (!same) {
        await ended(() =>
          inbox.suspend(this.sessionId, runId, { waiting_for: [...state.running], wake: "all" }),
        );
        this.log(`suspended on ${state.running.join(", ")}`);
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
