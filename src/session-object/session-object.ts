// The session Durable Object (wrangler.toml binds this class): its RPC surface, one line a method.
// Each delegates to a feature module (conversation, exec-jobs, inbox, operators, timers) of plain
// functions over the kernel, which holds the core and is the only place it changes.

import { DurableObject } from "cloudflare:workers";
import type { StoredEvent } from "../domain/audit";
import type { Result } from "../domain/errors";
import type { Claim, InboxCounts } from "../domain/inbox";
import type { IndexEntry } from "../domain/index-entry";
import type { CompletionReply } from "../domain/jobs";
import type { JobResult, Role, Wake } from "../domain/state";
import type { JobSummaryView, JobView, MessageView, SessionView } from "../domain/view";
import type { Env } from "../env";
import * as conversation from "./conversation";
import * as execJobs from "./exec-jobs";
import * as inbox from "./inbox";
import { Kernel } from "./kernel";
import * as operators from "./operators";
import * as timers from "./timers";

export class SessionObject extends DurableObject<Env> {
  private readonly kernel: Kernel;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.kernel = new Kernel(ctx, env);
    void ctx.blockConcurrencyWhile(() => this.kernel.start());
  }

  override alarm(): Promise<void> {
    return timers.alarm(this.kernel);
  }

  // ---- sessions, messages and runs -------------------------------------------------------

  create(cmd: {
    tenant: string;
    id: string;
    resumeUrl: string | null;
    metadata: Record<string, unknown>;
  }): Result<SessionView> {
    return conversation.create(this.kernel, cmd);
  }

  view(): Result<SessionView> {
    return conversation.viewOf(this.kernel, this.kernel.core);
  }

  remove(cmd: { by: "agent" | "operator" } = { by: "agent" }): Promise<Result<null>> {
    return conversation.remove(this.kernel, cmd);
  }

  appendMessage(cmd: {
    role: Role;
    content: unknown;
    metadata: Record<string, unknown>;
  }): Result<{ index: number }> {
    return conversation.appendMessage(this.kernel, cmd);
  }

  listMessages(cmd: {
    after: number;
    before: number | null;
    limit: number;
  }): Result<{ messages: MessageView[]; next_after: number | null }> {
    return conversation.listMessages(this.kernel, cmd);
  }

  registerRun(cmd: {
    runId: string | null;
    resumeId: string | null;
  }): Result<{ run_id: string; notify_seq: number }> {
    return conversation.registerRun(this.kernel, cmd);
  }

  suspend(cmd: {
    runId: string;
    handles: string[];
    wake: Wake;
    ceilingMs: number | null;
  }): Result<SessionView> {
    return conversation.suspend(this.kernel, cmd);
  }

  finish(cmd: { runId: string }): Result<SessionView> {
    return conversation.finish(this.kernel, cmd);
  }

  notifications(cmd: {
    runId: string;
    after: number;
    waitMs: number;
  }): Promise<Result<{ notify_seq: number; pending: number }>> {
    return conversation.notifications(this.kernel, cmd);
  }

  // ---- exec jobs and the inbox -----------------------------------------------------------

  reserveJob(cmd: {
    handle: string;
    command: string;
  }): Result<{ job: JobView; token: string; created: boolean }> {
    return execJobs.reserveJob(this.kernel, cmd);
  }

  getJob(cmd: { handle: string }): Result<JobView> {
    return execJobs.getJob(this.kernel, cmd);
  }

  listJobs(cmd: {
    status: "running" | "done" | null;
    after: number;
    limit: number;
  }): Result<{ jobs: JobSummaryView[]; next: number | null }> {
    return execJobs.listJobs(this.kernel, cmd);
  }

  complete(cmd: {
    lifetime: string;
    handle: string;
    tokenSeq: number | null;
    result: JobResult;
    observed: boolean;
  }): Result<CompletionReply> {
    return execJobs.complete(this.kernel, cmd);
  }

  inbox(): Result<InboxCounts> {
    return inbox.counts(this.kernel);
  }

  claim(cmd: { max: number; leaseMs: number }): Result<{ claims: Claim[] }> {
    return inbox.claim(this.kernel, cmd);
  }

  ack(cmd: { ids: string[] }): Result<{ acked: string[]; unknown: string[] }> {
    return inbox.ack(this.kernel, cmd);
  }

  // ---- operators and operations ----------------------------------------------------------

  events(cmd: {
    after: number;
    limit: number;
  }): Result<{ events: StoredEvent[]; next_after: number | null }> {
    return operators.events(this.kernel, cmd);
  }

  redeliver(): Result<{ resume_id: string }> {
    return operators.redeliver(this.kernel);
  }

  expireWaitNow(): Result<SessionView> {
    return operators.expireWaitNow(this.kernel);
  }

  markLost(cmd: { handle: string }): Result<CompletionReply> {
    return operators.markLost(this.kernel, cmd);
  }

  stats(): ReturnType<typeof operators.stats> {
    return operators.stats(this.kernel);
  }

  indexEntry(): Result<IndexEntry> {
    return operators.indexEntry(this.kernel);
  }

  /** Does nothing: the floor of a Durable Object call, for benchmarks and health checks. */
  ping(): Result<null> {
    return { ok: true, value: null };
  }
}
