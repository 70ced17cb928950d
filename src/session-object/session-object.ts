// The session Durable Object (wrangler.toml binds this class): its RPC surface, one line a method.
// Each delegates to a feature module (conversation, exec-jobs, inbox, operators) of plain
// functions over the loop (loop.ts), which holds the core and is the only place it changes.

import { DurableObject } from "cloudflare:workers";
import type { Result } from "../domain/errors";
import type { Env } from "../env";
import * as conversation from "./conversation";
import * as execJobs from "./exec-jobs";
import * as inbox from "./inbox";
import { Lifetime } from "./lifetime";
import { SessionLoop } from "./loop";
import * as mcpJobs from "./mcp-jobs";
import * as mcpTasks from "./mcp-tasks";
import * as operators from "./operators";

/** The command a feature function takes after the loop (or the lifetime). */
type Cmd<F> = F extends (on: never, cmd: infer C) => unknown ? C : never;

export class SessionObject extends DurableObject<Env> {
  private readonly loop: SessionLoop;
  private readonly lifetime: Lifetime;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.loop = new SessionLoop(ctx, env);
    this.lifetime = new Lifetime(ctx, this.loop, env.INDEX);
    void ctx.blockConcurrencyWhile(() => this.lifetime.start());
  }

  override alarm(): Promise<void> {
    return this.loop.alarm();
  }

  // ---- sessions, messages and runs -------------------------------------------------------

  create(cmd: Cmd<typeof conversation.create>) {
    return conversation.create(this.lifetime, cmd);
  }

  view() {
    return conversation.viewOf(this.loop, this.loop.core);
  }

  remove(cmd: Cmd<typeof conversation.remove> = { by: "agent" }) {
    return conversation.remove(this.lifetime, cmd);
  }

  setRunner(cmd: Cmd<typeof conversation.setRunner>) {
    return conversation.setRunner(this.loop, cmd);
  }

  toolContext() {
    return conversation.toolContext(this.loop);
  }

  appendMessage(cmd: Cmd<typeof conversation.appendMessage>) {
    return conversation.appendMessage(this.loop, cmd);
  }

  listMessages(cmd: Cmd<typeof conversation.listMessages>) {
    return conversation.listMessages(this.loop, cmd);
  }

  registerRun(cmd: Cmd<typeof conversation.registerRun>) {
    return conversation.registerRun(this.loop, cmd);
  }

  suspend(cmd: Cmd<typeof conversation.suspend>) {
    return conversation.suspend(this.loop, cmd);
  }

  finish(cmd: Cmd<typeof conversation.finish>) {
    return conversation.finish(this.loop, cmd);
  }

  notifications(cmd: Cmd<typeof conversation.notifications>) {
    return conversation.notifications(this.loop, cmd);
  }

  // ---- exec jobs and the inbox -----------------------------------------------------------

  /** The REST reservation, or (`startedBy`) an MCP tool's, whose handle may differ from its id. */
  reserveJob(
    cmd: Cmd<typeof execJobs.reserveJob> & { startedBy?: { runnerSeq: number } | undefined },
  ) {
    const { startedBy, ...rest } = cmd;
    return startedBy === undefined
      ? execJobs.reserveJob(this.loop, rest)
      : mcpJobs.reserveToolJob(this.loop, {
          runnerId: rest.handle,
          command: rest.command,
          runnerSeq: startedBy.runnerSeq,
        });
  }

  toolJob(cmd: Cmd<typeof mcpJobs.toolJob>) {
    return mcpJobs.toolJob(this.loop, cmd);
  }

  endUntrackedJob(cmd: Cmd<typeof mcpJobs.endUntrackedJob>) {
    return mcpJobs.endUntrackedJob(this.loop, cmd);
  }

  getJob(cmd: Cmd<typeof execJobs.getJob>) {
    return execJobs.getJob(this.loop, cmd);
  }

  listJobs(cmd: Cmd<typeof execJobs.listJobs>) {
    return execJobs.listJobs(this.loop, cmd);
  }

  complete(cmd: Cmd<typeof execJobs.complete>) {
    return execJobs.complete(this.loop, cmd);
  }

  heartbeat(cmd: Cmd<typeof execJobs.heartbeat>) {
    return execJobs.heartbeat(this.loop, cmd);
  }

  acceptPart(cmd: Cmd<typeof execJobs.acceptPart>) {
    return execJobs.acceptPart(this.loop, cmd);
  }

  releasePart(cmd: Cmd<typeof execJobs.releasePart>) {
    return execJobs.releasePart(this.loop, cmd);
  }

  callbackFence(cmd: Cmd<typeof execJobs.callbackFence>) {
    return execJobs.callbackFence(this.loop, cmd);
  }

  fullOutput(cmd: Cmd<typeof execJobs.fullOutput>) {
    return execJobs.fullOutput(this.loop, cmd);
  }

  cancel(cmd: Cmd<typeof execJobs.cancel>) {
    return execJobs.cancel(this.loop, cmd);
  }

  inbox() {
    return inbox.counts(this.loop);
  }

  // ---- MCP tasks -------------------------------------------------------------------------

  createTask(cmd: Cmd<typeof mcpTasks.createTask>) {
    return mcpTasks.createTask(this.loop, cmd);
  }

  taskRecord(cmd: Cmd<typeof mcpTasks.taskRecord>) {
    return mcpTasks.taskRecord(this.loop, cmd);
  }

  taskRecords(cmd: Cmd<typeof mcpTasks.taskRecords>) {
    return mcpTasks.taskRecords(this.loop, cmd);
  }

  cancelTask(cmd: Cmd<typeof mcpTasks.cancelTask>) {
    return mcpTasks.cancelTask(this.loop, cmd);
  }

  claim(cmd: Cmd<typeof inbox.claim>) {
    return inbox.claim(this.loop, cmd);
  }

  ack(cmd: Cmd<typeof inbox.ack>) {
    return inbox.ack(this.loop, cmd);
  }

  // ---- operators and operations ----------------------------------------------------------

  events(cmd: Cmd<typeof operators.events>) {
    return operators.events(this.loop, cmd);
  }

  redeliver() {
    return operators.redeliver(this.loop);
  }

  expireWaitNow() {
    return operators.expireWaitNow(this.loop);
  }

  markLost(cmd: Cmd<typeof operators.markLost>) {
    return operators.markLost(this.loop, cmd);
  }

  operatorCancel(cmd: Cmd<typeof operators.cancel>) {
    return operators.cancel(this.loop, cmd);
  }

  stats() {
    return operators.stats(this.loop);
  }

  indexEntry() {
    return operators.indexEntry(this.loop);
  }

  /** Does nothing: the floor of a Durable Object call, for benchmarks and health checks. */
  ping(): Result<null> {
    return { ok: true, value: null };
  }
}
