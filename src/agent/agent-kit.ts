// The host side of the exec-inbox contract for an AI SDK agent: resume webhooks, runs, claims, the
// model turn, durable conversation, acks and the turn boundary. The caller owns HTTP and the model.
import { randomUUID } from "node:crypto";
import type { LanguageModel } from "ai";
import { type ExecInboxClient, ExecInboxError, verifyResume } from "../client";
import type { ConversationStore, SessionRecord } from "./conversation-store";
import { runTurns } from "./run-turns";
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
  readonly outcome: "accepted" | "duplicate" | "unknown";
}

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 300_000;
const KEEP_RESUME_IDS = 256;
const KEEP_DELIVERIES = 1000;

const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export class AgentKit {
  readonly deliveries: ResumeDelivery[] = [];
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly retries = new Set<ReturnType<typeof setTimeout>>();
  private closed = false;

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

  private schedule(sessionId: string, waitLease = false, attempt = 0): void {
    this.serial(sessionId, () => this.drive(sessionId, waitLease)).catch((error: unknown) => {
      // The run stays registered and its claims unacked: nothing else would ever finish it, so
      // retry (after the lease, from the stored record) until it goes through or the host closes.
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt);
      this.log(`session ${sessionId}: run stopped (${String(error)}); retrying in ${delay} ms`);
      if (this.closed) return;
      const timer = setTimeout(() => {
        this.retries.delete(timer);
        this.schedule(sessionId, true, attempt + 1);
      }, delay);
      this.retries.add(timer);
    });
  }

  /** Stops retrying failed runs (a host shutting down; its stored runs resume on next start). */
  close(): void {
    this.closed = true;
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
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
    const sessionId = payload.session_id;
    // The signed `webhook-id` is the resume id (one per wake, the same on every redelivery).
    const resumeId = request.headers.get("webhook-id") ?? payload.resume_id;
    return this.serial(sessionId, async () => {
      const record = await this.options.store.load(sessionId);
      const note = (outcome: ResumeDelivery["outcome"]) => {
        this.deliveries.push({ sessionId, resumeId, reason: payload.reason, outcome });
        this.deliveries.splice(0, this.deliveries.length - KEEP_DELIVERIES);
      };
      if (record === undefined || record.lifetime !== payload.lifetime) {
        // Not 2xx: exec-inbox retries, then shows the resume as failed with this status.
        note("unknown");
        return json(404, { error: "no conversation for this session lifetime" });
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
      // Stored before it is registered: a host that dies in between registers the same run again.
      const activeRun = {
        runId: `human-${randomUUID()}`,
        resumeId: null,
        leaseExpiresAt: 0,
        pendingUserText: text,
      };
      await this.options.store.save({ ...record, activeRun });
      return this.drive(sessionId, false);
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

  /** Takes a received resume and drives the stored run to its end. Idempotent. */
  private async drive(sessionId: string, waitLease: boolean): Promise<string> {
    let record = await this.options.store.load(sessionId);
    if (record === undefined) return "";
    if (record.activeRun === null && record.pendingResume !== null) {
      // A run id derived from the resume: registering again after a crash is the same run.
      const resumeId = record.pendingResume;
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
    const run = record.activeRun;
    if (run === null) return "";
    try {
      // Registering the same run again is a no-op, so this also covers a restart mid-run.
      await this.options.inbox.registerRun(sessionId, {
        run_id: run.runId,
        ...(run.resumeId === null ? {} : { resume_id: run.resumeId }),
      });
    } catch (error) {
      if (!(error instanceof ExecInboxError) || error.problem.status === 409) throw error;
      // 404 / 410: the session is gone; nothing to run.
      await this.options.store.save({ ...record, activeRun: null });
      return "";
    }
    return runTurns(this.options, record, run, waitLease);
  }
}
