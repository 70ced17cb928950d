// The host side of the exec-inbox contract for an AI SDK agent: resume webhooks, runs, claims, the
// model turn, durable conversation, acks and the turn boundary. The caller owns HTTP and the model.
import { randomUUID } from "node:crypto";
import { verifyResume } from "@exec-inbox/client";
import type { ModelMessage } from "ai";
import { HEARTBEAT_TIMEOUT_MAX_MS, HEARTBEAT_TIMEOUT_MIN_MS } from "../shared/exec-wire";
import { MAX_RESUME_BODY_BYTES, parseBoundedJson, readBoundedText } from "./bounded-body";
import type { ConversationStore } from "./conversation-store";
import type { KitSettings } from "./kit-settings";
import { foldJournal, recoverStoredCalls } from "./recover-stored-calls";
import type { RecoveredToolCall } from "./recover-tool-calls";
import { isSessionGone, isStaleResume, retrying } from "./retry";
import { type KitRun, ModelTurnError, runTurns } from "./run-turns";
import type { SessionRecord } from "./session-record";
import { type AiSdkTurnOptions, aiSdkTurn, type TurnEngine } from "./turn-engine";

// The settings are their own module so that the turn loop (run-turns.ts) can take them without
// importing the kit; this subpath (`@exec-inbox/ai-sdk/agent-kit`) still names them.
export type { KitSettings } from "./kit-settings";

/**
 * The kit's options: its settings and either an AI SDK `model` (with `system`, `maxSteps`) or a
 * `turn` engine of another framework (for example `openAiAgentsTurn` of `openai-agents/`).
 */
export type AgentKitOptions<M = ModelMessage> = KitSettings<M> &
  (
    | ({ readonly turn: TurnEngine<M> } & { readonly [K in keyof AiSdkTurnOptions]?: never })
    | ([M] extends [ModelMessage] ? AiSdkTurnOptions & { readonly turn?: never } : never)
  );

/** The engine the options name: their own `turn`, or the AI SDK's over their `model`. */
function engineOf<M>(options: AgentKitOptions<M>): TurnEngine<M> {
  const ai = options as Partial<AiSdkTurnOptions>;
  // The types forbid both; a JavaScript caller (or a cast) is told, not silently given one.
  if (options.turn !== undefined && (ai.model ?? ai.system ?? ai.maxSteps) !== undefined) {
    throw new TypeError("give the kit either an AI SDK model (model, system, maxSteps) or a turn");
  }
  if (options.turn === undefined && ai.model === undefined) {
    throw new TypeError("the kit needs a model (AI SDK) or a turn engine");
  }
  if (options.turn !== undefined) return options.turn;
  return aiSdkTurn(options as AiSdkTurnOptions) as unknown as TurnEngine<M>;
}

/** One verified resume webhook as it arrived (duplicates included), for metrics and tests. */
export interface ResumeDelivery {
  readonly sessionId: string;
  readonly resumeId: string;
  readonly reason: string;
  readonly outcome: "accepted" | "duplicate" | "unknown";
}

/** A human message whose session is gone (deleted, or re-created): the message was not delivered. */
export class SessionGoneError extends Error {
  constructor(
    readonly sessionId: string,
    readonly text: string,
    cause: unknown,
  ) {
    super(`session ${sessionId} is gone; the message was not delivered`, { cause });
    this.name = "SessionGoneError";
  }
}

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 300_000;
const KEEP_RESUME_IDS = 256;
const KEEP_DELIVERIES = 1000;

/** Runs `task` after the earlier tasks queued under `key`; the map forgets a key once it is idle. */
function queued<T>(
  queues: Map<string, Promise<unknown>>,
  key: string,
  task: () => Promise<T>,
): Promise<T> {
  const next = (queues.get(key) ?? Promise.resolve()).then(task, task);
  const tail = next.then(
    () => {},
    () => {},
  );
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return next;
}

const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export class AgentKit<M = ModelMessage> {
  readonly deliveries: ResumeDelivery[] = [];
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly storeLocks = new Map<string, Promise<unknown>>();
  private readonly retries = new Set<ReturnType<typeof setTimeout>>();
  private closed = false;
  private readonly options: KitRun<M>;

  constructor(options: AgentKitOptions<M>) {
    this.options = { ...options, turn: engineOf(options) };
    // exec-inbox refuses any other value: every background job would be killed as unwatched.
    const timeout = options.heartbeatTimeoutMs;
    if (
      timeout !== undefined &&
      !(
        Number.isSafeInteger(timeout) &&
        timeout >= HEARTBEAT_TIMEOUT_MIN_MS &&
        timeout <= HEARTBEAT_TIMEOUT_MAX_MS
      )
    ) {
      throw new RangeError(
        `heartbeatTimeoutMs is ${String(timeout)}: it must be a whole number of ms from ${HEARTBEAT_TIMEOUT_MIN_MS} to ${HEARTBEAT_TIMEOUT_MAX_MS}`,
      );
    }
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  /** Runs `task` after every earlier task of the session: one turn at a time per session. */
  private serial<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    return queued(this.chains, sessionId, task);
  }

  /**
   * The store for runs: each save keeps the resume bookkeeping (`resumes`, a newer
   * `pendingResume`) that `handleResume` wrote meanwhile under the short store lock.
   */
  private readonly runStore: ConversationStore<M> = {
    load: (sessionId) => this.options.store.load(sessionId),
    delete: (sessionId) => this.options.store.delete(sessionId),
    list: () => this.options.store.list(),
    save: (record) =>
      queued(this.storeLocks, record.sessionId, async () => {
        const latest = await this.options.store.load(record.sessionId);
        // Deleted meanwhile: a run must not bring the session back.
        if (latest === undefined) return;
        const taken = record.activeRun?.resumeId ?? null;
        const pendingResume =
          latest.pendingResume !== null && latest.pendingResume !== taken
            ? latest.pendingResume
            : record.pendingResume;
        await this.options.store.save({ ...record, resumes: latest.resumes, pendingResume });
      }),
  };

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
      this.log(`session ${sessionId}: run stopped (${String(error)})`);
      this.scheduleRetry(sessionId, attempt);
    });
  }

  /**
   * The run stays stored (maybe registered, its claims unacked): nothing else would ever finish
   * it, so retry (after the lease, from the stored record) until it goes through or the host closes.
   */
  private scheduleRetry(sessionId: string, attempt: number): void {
    if (this.closed) return;
    const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt);
    this.log(`session ${sessionId}: retrying the run in ${delay} ms`);
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      this.schedule(sessionId, true, attempt + 1);
    }, delay);
    this.retries.add(timer);
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
      // Under the store lock: a resume recorded at the same moment must not bring the record back.
      await queued(this.storeLocks, sessionId, () => this.options.store.delete(sessionId));
    });
  }

  conversation(sessionId: string): Promise<SessionRecord<M> | undefined> {
    return this.options.store.load(sessionId);
  }

  /**
   * The resume webhook: verify, de-duplicate on `webhook-id`, record it durably, answer 202, then
   * run the turn in the background (a model turn may outlast exec-inbox's 10 s delivery timeout).
   */
  async handleResume(request: Request): Promise<Response> {
    // Anyone can reach this route: cap the body while it streams in, and refuse JSON nested past
    // the limit, before the signature check or the parser walks it.
    const read = await readBoundedText(request, MAX_RESUME_BODY_BYTES);
    if (!read.ok) return json(read.status, { error: read.error });
    const parsed = parseBoundedJson(read.text);
    if (!parsed.ok) return json(parsed.status, { error: parsed.error });
    let payload: Awaited<ReturnType<typeof verifyResume>>;
    try {
      const body = new Request(request.url, {
        method: "POST",
        headers: request.headers,
        body: read.text,
      });
      payload = await verifyResume(body, this.options.resumeSigningSecret);
    } catch {
      return json(401, { error: "invalid webhook signature" });
    }
    const sessionId = payload.session_id;
    // The signed `webhook-id` is the resume id (one per wake, the same on every redelivery).
    const resumeId = request.headers.get("webhook-id") ?? payload.resume_id;
    // Only the store lock, never the run chain: the answer does not wait for a model turn or a
    // lease, so exec-inbox's delivery timeout never sends the same resume again for that.
    return queued(this.storeLocks, sessionId, async () => {
      const record = await this.options.store.load(sessionId);
      const note = (outcome: ResumeDelivery["outcome"]) => {
        this.deliveries.push({ sessionId, resumeId, reason: payload.reason, outcome });
        this.deliveries.splice(0, this.deliveries.length - KEEP_DELIVERIES);
      };
      const tenant = this.options.tenant ?? "default";
      if (payload.tenant !== tenant) {
        note("unknown");
        return json(404, { error: `no conversation for this session in tenant ${payload.tenant}` });
      }
      if (record === undefined || record.lifetime !== payload.lifetime) {
        // Not 2xx: exec-inbox retries, then shows the resume as failed with this status.
        note("unknown");
        return json(404, { error: "no conversation for this session lifetime" });
      }
      if (record.resumes.includes(resumeId)) {
        note("duplicate");
        // A duplicate does nothing: its work is stored (pending, or a run the chain or a retry
        // finishes) or done. A replay of a signed webhook inside its window must not run again.
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

  /**
   * A human message: a run of its own, which leaves an armed wait armed. Rejects when
   * the run cannot be registered: with `SessionGoneError` (the message is not kept), or with the
   * transient error, the message then kept in the stored run and retried in the background.
   */
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
      await this.runStore.save({ ...record, activeRun });
      try {
        return await this.drive(sessionId, false);
      } catch (error) {
        // The message is stored with its run: finish it once exec-inbox answers again.
        // A failing model already ended the run: nothing is stored to retry.
        if (!(error instanceof SessionGoneError || error instanceof ModelTurnError)) {
          this.scheduleRetry(sessionId, 0);
        }
        throw error;
      }
    });
  }

  /**
   * After a restart: finish every run and resume the stored records say were under way, and put
   * the journaled calls of a run that ended without storing its turn into its conversation.
   */
  async recover(): Promise<void> {
    const sessionIds = await this.options.store.list();
    await Promise.all(
      sessionIds.map(async (sessionId) => {
        const record = await this.options.store.load(sessionId);
        if (record === undefined) return;
        if (record.activeRun === null && record.pendingResume === null) {
          // Calls journaled by a turn whose run ended unstored (its model failed, then the host
          // stopped): they go into the conversation now, not after the next run's messages.
          if ((record.toolCalls ?? []).length === 0) return;
          await this.serial(sessionId, () => foldJournal(this.options, this.runStore, sessionId));
          return;
        }
        this.schedule(sessionId, true);
        await this.settled(sessionId);
      }),
    );
  }

  /**
   * Gives every tool call the stored conversation holds without a result (a compaction dropped
   * it) a result, right after the call, and stores it: an exec_command or write_stdin its job's
   * truth from exec-inbox, a read a note to ask again. Nothing is started or sent again. With no
   * run under way, journaled calls of an unstored turn are appended with their results first;
   * a run's own are its next turn's. Waits for the session's queued work first.
   */
  recoverToolCalls(sessionId: string): Promise<RecoveredToolCall[]> {
    return this.serial(sessionId, () => recoverStoredCalls(this.options, this.runStore, sessionId));
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
      await this.runStore.save(record);
      this.log(`session ${sessionId}: resumed by ${resumeId}`);
    }
    const run = record.activeRun;
    if (run === null) return "";
    try {
      // Registering the same run again is a no-op, so this also covers a restart mid-run.
      await retrying(() =>
        this.options.inbox.registerRun(sessionId, {
          run_id: run.runId,
          ...(run.resumeId === null ? {} : { resume_id: run.resumeId }),
        }),
      );
    } catch (error) {
      // A resume the session no longer holds was replaced by a newer wake, which arrives as its
      // own webhook: this run is dropped, and nothing is owed to it.
      if (isStaleResume(error) && run.resumeId !== null) {
        this.log(`session ${sessionId}: resume ${run.resumeId} was replaced; not resuming`);
        await this.runStore.save({ ...record, activeRun: null });
        return "";
      }
      // Anything but "the session is gone" keeps the stored run: the caller retries it.
      if (!isSessionGone(error)) throw error;
      await this.runStore.save({ ...record, activeRun: null });
      if (run.pendingUserText !== null) {
        throw new SessionGoneError(sessionId, run.pendingUserText, error);
      }
      return "";
    }
    return runTurns({ ...this.options, store: this.runStore }, record, run, waitLease);
  }
}
