// An agent host on OpenAI Agents JS: `prompt` runs a human turn, `handleResume` takes exec-inbox's
// signed webhook; both drive the same turns — claim, apply each new envelope to the run's history
// once (stored with its id), run the agent on, store, ack — and end suspended on what still runs
// or finished. The agent (model, instructions) is the caller's; the tools are the exec tools.
import { Agent, type AgentInputItem, type Model, Runner } from "@openai/agents";
import { retrying } from "../agent/retry";
import type { RunnerClient } from "../agent/runner-client";
import { type Claim, type ExecInboxClient, ExecInboxError, verifyResume } from "../client";
import { openaiExecTools } from "./exec-tools";
import { type SessionRecord, SessionStore } from "./session-store";

export interface OpenAIAgentsHostOptions {
  readonly inbox: ExecInboxClient;
  readonly runner: RunnerClient;
  /** The model of a session's agent (a fake one in tests). */
  readonly model: (sessionId: string) => Model;
  readonly instructions?: string;
  readonly resumeSigningSecret: string;
  readonly stateDir: string;
  readonly leaseMs?: number;
  readonly maxTurns?: number;
  /** Send traces to OpenAI's tracing exporter (off by default: it needs an API key). */
  readonly tracing?: boolean;
  readonly log?: (line: string) => void;
}

export type ResumeOutcome = "taken" | "duplicate" | "stale" | "busy" | "gone";

const MAX_ROUNDS = 8;
const DEFAULT_INSTRUCTIONS =
  "You operate a shell through exec_command and write_stdin. Long commands continue in the background; when one ends you get a runtime message, and you read its result with write_stdin.";

const conflict = (error: unknown, code: string): boolean =>
  error instanceof ExecInboxError && error.problem.code === code;
const gone = (error: unknown): boolean =>
  error instanceof ExecInboxError && (error.problem.status === 404 || error.problem.status === 410);

const handlesOf = (claim: Claim): string[] => {
  const data = claim.envelope.body.data as { session_id?: string; handles?: string[] };
  return data.handles ?? (data.session_id === undefined ? [] : [data.session_id]);
};

export class OpenAIAgentsHost {
  readonly store: SessionStore;
  /** Every signed webhook that verified, in arrival order (tests replay them). */
  readonly deliveries: Array<{ sessionId: string; resumeId: string; outcome: ResumeOutcome }> = [];
  /** One chain per session: its prompts and resumes never interleave. */
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly background = new Set<Promise<unknown>>();
  /** The SDK's run loop (not the exec runner, which is `options.runner`). */
  private readonly agentLoop: Runner;

  constructor(private readonly options: OpenAIAgentsHostOptions) {
    this.store = new SessionStore(options.stateDir);
    this.agentLoop = new Runner({ tracingDisabled: options.tracing !== true });
  }

  private serially<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const next = (this.chains.get(sessionId) ?? Promise.resolve()).then(work, work);
    this.chains.set(
      sessionId,
      next.catch(() => undefined),
    );
    return next;
  }

  /** A human message: one run, its turns, the agent's last answer. */
  prompt(sessionId: string, text: string): Promise<string> {
    return this.serially(sessionId, async () => {
      const { inbox } = this.options;
      const { run_id } = await retrying(() => inbox.registerRun(sessionId, {}));
      let record = await this.store.load(sessionId);
      const lifetime = record.lifetime ?? (await inbox.getSession(sessionId)).lifetime;
      record = {
        ...record,
        lifetime,
        activeRunId: run_id,
        turnOwed: true,
        history: [...record.history, { role: "user", content: text }],
      };
      await this.store.save(record);
      return this.turns(record);
    });
  }

  /**
   * The resume webhook: 401 unless signed; a resume already taken (a redelivery, a replay) or no
   * longer held is answered 200 and does nothing; else the run is registered for it, the answer is
   * 202, and the turns run after.
   */
  async handleResume(request: Request): Promise<Response> {
    let payload: Awaited<ReturnType<typeof verifyResume>>;
    try {
      payload = await verifyResume(request, this.options.resumeSigningSecret);
    } catch {
      return new Response("bad signature", { status: 401 });
    }
    const outcome = await this.serially(payload.session_id, () => this.takeResume(payload));
    this.deliveries.push({
      sessionId: payload.session_id,
      resumeId: payload.resume_id,
      outcome: outcome.outcome,
    });
    const taken = outcome.record;
    if (taken !== null) {
      const turns = this.serially(payload.session_id, () => this.turns(taken))
        .catch((error: unknown) => this.log(payload.session_id, `turns failed: ${String(error)}`))
        .finally(() => this.background.delete(turns));
      this.background.add(turns);
    }
    return new Response(null, { status: outcome.outcome === "taken" ? 202 : 200 });
  }

  private async takeResume(payload: {
    session_id: string;
    lifetime: string;
    resume_id: string;
  }): Promise<{ outcome: ResumeOutcome; record: SessionRecord | null }> {
    const { inbox } = this.options;
    let record = await this.store.load(payload.session_id);
    if (record.resumes.includes(payload.resume_id)) return { outcome: "duplicate", record: null };
    if (record.lifetime !== null && record.lifetime !== payload.lifetime) {
      // The session was deleted and created again: its old history is no more.
      record = {
        ...record,
        lifetime: null,
        history: [],
        applied: [],
        running: [],
        turnOwed: false,
      };
    }
    let runId: string;
    try {
      runId = (
        await retrying(() =>
          inbox.registerRun(payload.session_id, { resume_id: payload.resume_id }),
        )
      ).run_id;
    } catch (error) {
      if (gone(error)) return { outcome: "gone", record: null };
      if (conflict(error, "invalid_transition")) {
        await this.store.save({ ...record, resumes: [...record.resumes, payload.resume_id] });
        return { outcome: "stale", record: null };
      }
      if (!conflict(error, "run_conflict")) throw error;
      const view = await inbox.getSession(payload.session_id);
      if (view.run === null || view.run.resume_id !== payload.resume_id) {
        return { outcome: "busy", record: null };
      }
      runId = view.run.run_id;
    }
    record = {
      ...record,
      lifetime: payload.lifetime,
      activeRunId: runId,
      resumes: [...record.resumes, payload.resume_id].slice(-4096),
    };
    await this.store.save(record);
    return { outcome: "taken", record };
  }

  /** Claim → apply and store → run → store → ack, until nothing new; then suspend or finish. */
  private async turns(start: SessionRecord): Promise<string> {
    const { inbox, leaseMs = 60_000 } = this.options;
    const sessionId = start.sessionId;
    const runId = start.activeRunId;
    if (runId === null) return "";
    let record = start;
    let answer = "";
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const { claims } = await retrying(() =>
        inbox.claim(sessionId, { max: 16, lease_ms: leaseMs }),
      );
      const ids = claims.map((claim) => claim.envelope.id);
      const fresh = claims.filter((claim) => !record.applied.includes(claim.envelope.id));
      if (fresh.length === 0 && !record.turnOwed) {
        if (ids.length > 0) await retrying(() => inbox.ack(sessionId, { ids }));
        break;
      }
      if (fresh.length > 0) {
        const ended = new Set(fresh.flatMap(handlesOf));
        const items: AgentInputItem[] = fresh.map((claim) => ({
          role: "user",
          content: claim.provider_message.content,
          providerData: { execInbox: { id: claim.provider_message.id, hidden_from_ui: true } },
        }));
        // The items and the ids that say they were applied, in one atomic write.
        record = {
          ...record,
          history: [...record.history, ...items],
          applied: [...record.applied, ...fresh.map((claim) => claim.envelope.id)].slice(-4096),
          running: record.running.filter((handle) => !ended.has(handle)),
          turnOwed: true,
        };
        await this.store.save(record);
      }
      const running = new Set(record.running);
      const agent = new Agent({
        name: "exec-agent",
        instructions: this.options.instructions ?? DEFAULT_INSTRUCTIONS,
        model: this.options.model(sessionId),
        tools: openaiExecTools({
          inbox,
          runner: this.options.runner,
          sessionId,
          onBackground: (handle) => running.add(handle),
          onEnded: (handle) => running.delete(handle),
        }),
      });
      const result = await this.agentLoop.run(agent, record.history, {
        maxTurns: this.options.maxTurns ?? 8,
      });
      record = { ...record, history: result.history, running: [...running], turnOwed: false };
      await this.store.save(record);
      answer = typeof result.finalOutput === "string" ? result.finalOutput : "";
      // Acked only once the turn that read them is stored.
      if (ids.length > 0) await retrying(() => inbox.ack(sessionId, { ids }));
    }
    await this.endTurn(record, runId);
    await this.store.save({ ...record, activeRunId: null });
    return answer;
  }

  private async endTurn(record: SessionRecord, runId: string): Promise<void> {
    const { inbox } = this.options;
    const ended = async (call: () => Promise<unknown>) => {
      try {
        await retrying(call);
      } catch (error) {
        if (!conflict(error, "invalid_transition")) throw error;
      }
    };
    if (record.running.length > 0) {
      const armed = (await inbox.getSession(record.sessionId)).waiting_for_bash;
      const same =
        armed !== null &&
        armed.handles.length === record.running.length &&
        record.running.every((handle) => armed.handles.includes(handle));
      if (!same) {
        await ended(() =>
          inbox.suspend(record.sessionId, runId, { waiting_for: [...record.running], wake: "all" }),
        );
        return;
      }
    }
    await ended(() => inbox.finishRun(record.sessionId, runId));
  }

  /** Waits for the turns that resumes started. */
  async idle(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
  }

  private log(sessionId: string, line: string): void {
    (this.options.log ?? console.log)(`session ${sessionId}: ${line}`);
  }
}
