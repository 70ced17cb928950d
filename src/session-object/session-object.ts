// The session Durable Object (wrangler.toml binds this class): its RPC surface, one line a method.
// Each delegates to a feature module (conversation, exec-jobs, inbox, operators, timers) of plain
// functions over the kernel, which holds the core and is the only place it changes.

import { DurableObject } from "cloudflare:workers";
import type { Result } from "../domain/errors";
import type { Env } from "../env";
import * as conversation from "./conversation";
import * as execJobs from "./exec-jobs";
import * as inbox from "./inbox";
import { Kernel } from "./kernel";
import * as operators from "./operators";
import * as timers from "./timers";

/** The command a feature function takes after the kernel. */
type Cmd<F> = F extends (k: Kernel, cmd: infer C) => unknown ? C : never;

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

  create(cmd: Cmd<typeof conversation.create>) {
    return conversation.create(this.kernel, cmd);
  }

  view() {
    return conversation.viewOf(this.kernel, this.kernel.core);
  }

  remove(cmd: Cmd<typeof conversation.remove> = { by: "agent" }) {
    return conversation.remove(this.kernel, cmd);
  }

  appendMessage(cmd: Cmd<typeof conversation.appendMessage>) {
    return conversation.appendMessage(this.kernel, cmd);
  }

  listMessages(cmd: Cmd<typeof conversation.listMessages>) {
    return conversation.listMessages(this.kernel, cmd);
  }

  registerRun(cmd: Cmd<typeof conversation.registerRun>) {
    return conversation.registerRun(this.kernel, cmd);
  }

  suspend(cmd: Cmd<typeof conversation.suspend>) {
    return conversation.suspend(this.kernel, cmd);
  }

  finish(cmd: Cmd<typeof conversation.finish>) {
    return conversation.finish(this.kernel, cmd);
  }

  notifications(cmd: Cmd<typeof conversation.notifications>) {
    return conversation.notifications(this.kernel, cmd);
  }

  // ---- exec jobs and the inbox -----------------------------------------------------------

  reserveJob(cmd: Cmd<typeof execJobs.reserveJob>) {
    return execJobs.reserveJob(this.kernel, cmd);
  }

  getJob(cmd: Cmd<typeof execJobs.getJob>) {
    return execJobs.getJob(this.kernel, cmd);
  }

  listJobs(cmd: Cmd<typeof execJobs.listJobs>) {
    return execJobs.listJobs(this.kernel, cmd);
  }

  complete(cmd: Cmd<typeof execJobs.complete>) {
    return execJobs.complete(this.kernel, cmd);
  }

  heartbeat(cmd: Cmd<typeof execJobs.heartbeat>) {
    return execJobs.heartbeat(this.kernel, cmd);
  }

  acceptPart(cmd: Cmd<typeof execJobs.acceptPart>) {
    return execJobs.acceptPart(this.kernel, cmd);
  }

  releasePart(cmd: Cmd<typeof execJobs.releasePart>) {
    return execJobs.releasePart(this.kernel, cmd);
  }

  callbackFence(cmd: Cmd<typeof execJobs.callbackFence>) {
    return execJobs.callbackFence(this.kernel, cmd);
  }

  fullOutput(cmd: Cmd<typeof execJobs.fullOutput>) {
    return execJobs.fullOutput(this.kernel, cmd);
  }

  cancel(cmd: Cmd<typeof execJobs.cancel>) {
    return execJobs.cancel(this.kernel, cmd);
  }

  inbox() {
    return inbox.counts(this.kernel);
  }

  claim(cmd: Cmd<typeof inbox.claim>) {
    return inbox.claim(this.kernel, cmd);
  }

  ack(cmd: Cmd<typeof inbox.ack>) {
    return inbox.ack(this.kernel, cmd);
  }

  // ---- operators and operations ----------------------------------------------------------

  events(cmd: Cmd<typeof operators.events>) {
    return operators.events(this.kernel, cmd);
  }

  redeliver() {
    return operators.redeliver(this.kernel);
  }

  expireWaitNow() {
    return operators.expireWaitNow(this.kernel);
  }

  markLost(cmd: Cmd<typeof operators.markLost>) {
    return operators.markLost(this.kernel, cmd);
  }

  operatorCancel(cmd: Cmd<typeof operators.cancel>) {
    return operators.cancel(this.kernel, cmd);
  }

  stats() {
    return operators.stats(this.kernel);
  }

  indexEntry() {
    return operators.indexEntry(this.kernel);
  }

  /** Does nothing: the floor of a Durable Object call, for benchmarks and health checks. */
  ping(): Result<null> {
    return { ok: true, value: null };
  }
}
