// The host side of the exec-inbox contract for an AI SDK agent: resume webhooks, runs, claims, the
// model turn, durable conversation, acks and the turn boundary. The caller owns HTTP and the model.
import { randomUUID } from "node:crypto";
import { generateText, type LanguageModel, type ModelMessage, stepCountIs } from "ai";
import { type Claim, type ExecInboxClient, ExecInboxError, verifyResume } from "../client";
import type { ActiveRun, ConversationStore, SessionRecord } from "./conversation-store";
import { execTools } from "./exec-tools";
import type { RunnerClient } from "./runner-client";

export interface AgentKitOptions {
  readonly inbox: ExecInboxClient;
  readonly runner: RunnerClient;
  readonly store: ConversationStore;
  /** The model of one session's agent. */
  readonly model: (sessionId: string) => LanguageModel;
  /** `whsec_…`: exec-inbox's RESUME_SIGNING_SECRET. */
  readonly resumeSigningSecret: string;
  /** Where exec-inbox posts this host's resumes (an origin it allows). */
  readonly resumeUrl: string;
  readonly system?: string;
  /** The wait a turn ends on when commands still run: `all` (default) or `any` of them. */
  readonly wake?: "all" | "any";
  readonly ceilingMs?: number;
  /** Claim lease: a host that dies holding a claim sees it again this long after. */
  readonly leaseMs?: number;
  readonly maxSteps?: number;
  readonly log?: (line: string) => void;
  /** Crash injection for tests: throwing here stops the run after the turn is stored, before ack. */
  readonly afterStore?: (sessionId: string) => void;
}

/** One verified resume webhook as it arrived (duplicates included), for metrics and tests. */
export interface ResumeDelivery {
  readonly sessionId: string;
  readonly resumeId: string;
  readonly reason: string;
  readonly outcome: "accepted" | "duplicate" | "ignored";
}

const MAX_ROUNDS = 8;
const KEEP_RESUME_IDS = 256;
const KEEP_APPLIED_IDS = 4096;
const DEFAULT_SYSTEM =
  "You operate a shell through exec_command and write_stdin. Long commands continue in the background; when one ends you get a runtime message, and you read its result with write_stdin.";

const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const handlesOf = (claim: Claim): string[] => {
  const data = claim.envelope.body.data as { session_id?: string; handles?: string[] };
  return data.handles ?? (data.session_id === undefined ? [] : [data.session_id]);
};

/** A host that crashed after ending its run ends it again on recovery: the run is no longer active. */
async function endedAlready(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ExecInboxError && error.problem.code === "invalid_transition") return;
    throw error;
  }
}

export class AgentKit {
  readonly deliveries: ResumeDelivery[] = [];
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(private readonly options: AgentKitOptions) {}

  private log(line: string): void {
    this.options.log?.(line);
  }

  /** Runs `task` after every earlier task of the session: one turn at a time per session. */
  private serial<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    const next = (this.chains.get(sessionId) ?? Promise.resolve()).then(task, task);
    this.chains.set(
      sessionId,
      next.catch(() => {}),
    );
    return next;
  }

  /** Resolves once the session has no queued or running work (tests, shutdown). */
  async settled(sessionId: string): Promise<void> {
    for (;;) {
      const chain = this.chains.get(sessionId);
      await chain;
      if (this.chains.get(sessionId) === chain) return;
    }
  }

  private schedule(sessionId: string, waitLease = false): void {
    this.serial(sessionId, () => this.drive(sessionId, waitLease)).catch((error: unknown) =>
      this.log(`session ${sessionId}: run stopped: ${String(error)}`),
    );
  }

  async createSession(sessionId: string, metadata?: Record<string, unknown>): Promise<void> {
    const view = await this.options.inbox.createSession({
      id: sessionId,
      resume_url: this.options.resumeUrl,
      ...(metadata === undefined ? {} : { metadata }),
    });
    await this.options.store.save({
      sessionId,
      lifetime: view.lifetime,
      messages: [],
      running: [],
      applied: [],
      resumes: [],
      pendingResume: null,
      activeRun: null,
    });
  }

  async deleteSession(sessionId: string): Promise<void> {
    await this.serial(sessionId, async () => {
      await this.options.inbox.deleteSession(sessionId);
      await this.options.store.delete(sessionId);
    });
  }

  conversation(sessionId: string): Promise<SessionRecord | undefined> {
    return this.options.store.load(sessionId);
  }

  /**
   * The resume webhook: verify, de-duplicate on `webhook-id`, record it durably, answer 202, then
   * run the turn in the background (a model turn may outlast exec-inbox's 10 s delivery timeout).
   */
  async handleResume(request: Request): Promise<Response> {
    let payload: Awaited<ReturnType<typeof verifyResume>>;
    try {
      payload = await verifyResume(request, this.options.resumeSigningSecret);
    } catch {
      return json(401, { error: "invalid webhook signature" });
    }
    const { session_id: sessionId, resume_id: resumeId } = payload;
    return this.serial(sessionId, async () => {
      const record = await this.options.store.load(sessionId);
      const note = (outcome: ResumeDelivery["outcome"]) =>
        this.deliveries.push({ sessionId, resumeId, reason: payload.reason, outcome });
      if (record === undefined || record.lifetime !== payload.lifetime) {
        note("ignored");
        return json(200, { ignored: "no conversation for this session lifetime" });
      }
      if (record.resumes.includes(resumeId)) {
        note("duplicate");
        // A redelivery after a crash: make sure the recorded work is being done.
        if (record.pendingResume !== null || record.activeRun !== null) this.schedule(sessionId);
        return json(200, { duplicate: true });
      }
      note("accepted");
      await this.options.store.save({
        ...record,
        resumes: [...record.resumes, resumeId].slice(-KEEP_RESUME_IDS),
        pendingResume: resumeId,
      });
      this.schedule(sessionId);
      return json(202, { accepted: true });
    });
  }

  /** A human message: a run of its own, which leaves an armed wait armed (contract S2). */
  sendUserMessage(sessionId: string, text: string): Promise<string> {
    return this.serial(sessionId, async () => {
      await this.drive(sessionId, true);
      const record = await this.options.store.load(sessionId);
      if (record === undefined) throw new Error(`no session ${sessionId}`);
      const { run_id: runId } = await this.options.inbox.registerRun(sessionId, {
        run_id: `human-${randomUUID()}`,
      });
      const activeRun = { runId, resumeId: null, leaseExpiresAt: 0, pendingUserText: text };
      const started = { ...record, activeRun };
      await this.options.store.save(started);
      return this.runTurns(started, activeRun, false);
    });
  }

  /** After a restart: finish every run and resume the stored records say were under way. */
  async recover(): Promise<void> {
    const sessionIds = await this.options.store.list();
    await Promise.all(
      sessionIds.map(async (sessionId) => {
        const record = await this.options.store.load(sessionId);
        if (record?.activeRun == null && record?.pendingResume == null) return;
        this.schedule(sessionId, true);
        await this.settled(sessionId);
      }),
    );
  }

  /** Takes a received resume (registering its run) and drives any unfinished run. Idempotent. */
  private async drive(sessionId: string, waitLease: boolean): Promise<string> {
    let record = await this.options.store.load(sessionId);
    if (record === undefined) return "";
    if (record.activeRun === null && record.pendingResume !== null) {
      const resumeId = record.pendingResume;
      try {
        // A run id derived from the resume: registering again after a crash is the same run.
        await this.options.inbox.registerRun(sessionId, {
          run_id: `run-${resumeId}`,
          resume_id: resumeId,
        });
      } catch (error) {
        if (!(error instanceof ExecInboxError) || error.problem.status === 409) throw error;
        // 404 / 410: the session is gone; nothing to resume.
        await this.options.store.save({ ...record, pendingResume: null });
        return "";
      }
      const activeRun = {
        runId: `run-${resumeId}`,
        resumeId,
        leaseExpiresAt: 0,
        pendingUserText: null,
      };
      record = { ...record, pendingResume: null, activeRun };
      await this.options.store.save(record);
      this.log(`session ${sessionId}: resumed by ${resumeId}`);
    }
    if (record.activeRun === null) return "";
    return this.runTurns(record, record.activeRun, waitLease);
  }

  /** Claim → model turn → store → ack, until nothing new arrives; then suspend or finish. */
  private async runTurns(
    initial: SessionRecord,
    run: ActiveRun,
    waitLease: boolean,
  ): Promise<string> {
    const { inbox, store, leaseMs = 60_000 } = this.options;
    const sessionId = initial.sessionId;
    let record = initial;
    let answer = "";
    if (waitLease && run.leaseExpiresAt > Date.now()) {
      // A claim held by the host that crashed comes back only when its lease ends.
      await new Promise((resolve) => setTimeout(resolve, run.leaseExpiresAt - Date.now() + 50));
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const { claims } = await inbox.claim(sessionId, { max: 16, lease_ms: leaseMs });
      const userText = record.activeRun?.pendingUserText ?? null;
      const fresh = claims.filter((claim) => !record.applied.includes(claim.envelope.id));
      const ids = claims.map((claim) => claim.envelope.id);
      if (fresh.length === 0 && userText === null) {
        if (ids.length > 0) await inbox.ack(sessionId, { ids });
        break;
      }
      const leaseExpiresAt = Math.max(
        0,
        ...claims.map((claim) => Date.parse(claim.lease_expires_at)),
      );
      record = { ...record, activeRun: { ...run, leaseExpiresAt, pendingUserText: userText } };
      await store.save(record);
      const turn = await this.modelTurn(record, userText, fresh);
      answer = turn.text;
      record = {
        ...record,
        messages: turn.messages,
        running: turn.running,
        applied: [...record.applied, ...fresh.map((c) => c.envelope.id)].slice(-KEEP_APPLIED_IDS),
        activeRun: { ...run, leaseExpiresAt, pendingUserText: null },
      };
      await store.save(record);
      this.options.afterStore?.(sessionId);
      if (ids.length > 0) await inbox.ack(sessionId, { ids });
    }
    await this.endTurn(record, run.runId);
    await store.save({ ...record, activeRun: null });
    return answer;
  }

  private async modelTurn(record: SessionRecord, userText: string | null, claims: Claim[]) {
    const messages: ModelMessage[] = [...record.messages];
    const running = new Set(record.running);
    if (userText !== null) messages.push({ role: "user", content: userText });
    for (const claim of claims) {
      messages.push({ role: "user", content: claim.provider_message.content });
      for (const handle of handlesOf(claim)) running.delete(handle);
    }
    const result = await generateText({
      model: this.options.model(record.sessionId),
      system: this.options.system ?? DEFAULT_SYSTEM,
      messages,
      tools: execTools({
        inbox: this.options.inbox,
        runner: this.options.runner,
        sessionId: record.sessionId,
        onBackground: (handle) => running.add(handle),
        onEnded: (handle) => running.delete(handle),
      }),
      stopWhen: stepCountIs(this.options.maxSteps ?? 8),
    });
    return {
      messages: [...messages, ...result.response.messages],
      running: [...running],
      text: result.text,
    };
  }

  /** Commands still running: wait for them (keeping a wait that already covers them); else finish. */
  private async endTurn(record: SessionRecord, runId: string): Promise<void> {
    const { inbox, wake = "all", ceilingMs } = this.options;
    const sessionId = record.sessionId;
    if (record.running.length > 0) {
      const armed = (await inbox.getSession(sessionId)).waiting_for_bash;
      const same =
        armed !== null &&
        armed.wake === wake &&
        armed.handles.length === record.running.length &&
        record.running.every((handle) => armed.handles.includes(handle));
      if (!same) {
        await endedAlready(
          inbox.suspend(sessionId, runId, {
            waiting_for: record.running,
            wake,
            ...(ceilingMs === undefined ? {} : { ceiling_ms: ceilingMs }),
          }),
        );
        this.log(`session ${sessionId}: suspended on ${record.running.join(", ")}`);
        return;
      }
    }
    await endedAlready(inbox.finishRun(sessionId, runId));
    this.log(`session ${sessionId}: run ${runId} finished`);
  }
}
