// The RPC surface of sessions, messages and runs: each method loads, decides and commits through
// the shell. HTTP validation and status codes are left to src/http.

import { fail, type Result } from "../domain/errors";
import { MESSAGE_PAGE_MAX_BYTES } from "../domain/limits";
import {
  appendMessage,
  createSession,
  finishRun,
  registerRun,
  requireActiveRun,
  suspendRun,
} from "../domain/session";
import { type Role, sessionStatus, type Wake } from "../domain/state";
import { type MessageView, messageView, type SessionView } from "../domain/view";
import { migrate } from "./migrations";
import { newId } from "./session-shell";
import { SessionTimers } from "./session-timers";
import * as store from "./store";

export abstract class SessionConversation extends SessionTimers {
  // ---- sessions and messages -------------------------------------------------------------

  create(cmd: {
    tenant: string;
    id: string;
    resumeUrl: string | null;
    metadata: Record<string, unknown>;
  }): Result<SessionView> {
    const decision = createSession(this.core, { ...cmd, lifetime: newId("lt") }, Date.now());
    if (!decision.ok) return decision;
    this.ctx.storage.transactionSync(() => migrate(this.sql));
    const result = this.commit(null, decision);
    return result.ok ? this.viewOf(result.value) : result;
  }

  view(): Result<SessionView> {
    return this.viewOf(this.core);
  }

  /** Ends the lifetime: every row, the schema and the alarm go; the next create starts afresh. */
  async remove(cmd: { by: "agent" | "operator" } = { by: "agent" }): Promise<Result<null>> {
    if (this.core === null) return fail("not_found", "no such session");
    // The trail goes with the storage it lives in (contract: a deleted session keeps nothing), so
    // an operator's delete leaves this line in the Worker's log instead.
    if (cmd.by === "operator") {
      console.log(
        `operator deleted session ${this.core.tenant}/${this.core.id} (${this.core.lifetime})`,
      );
    }
    this.audit.forget();
    this.indexer.removed(this.core.tenant, this.core.id);
    this.core = null;
    this.retainedSince = null;
    this.waiters.wakeAll();
    await this.ctx.blockConcurrencyWhile(async () => {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.physicalAlarm.forget();
    });
    return { ok: true, value: null };
  }

  appendMessage(cmd: {
    role: Role;
    content: unknown;
    metadata: Record<string, unknown>;
  }): Result<{ index: number }> {
    return this.decide(
      (core) => core,
      (session, now) => appendMessage(session, cmd, now),
    );
  }

  listMessages(cmd: {
    after: number;
    before: number | null;
    limit: number;
  }): Result<{ messages: MessageView[]; next_after: number | null }> {
    if (this.core === null) return fail("not_found", "no such session");
    const page = this.read((sql) =>
      store.listMessages(sql, { ...cmd, maxBytes: MESSAGE_PAGE_MAX_BYTES }),
    );
    return {
      ok: true,
      value: { messages: page.messages.map(messageView), next_after: page.nextAfter },
    };
  }

  // ---- runs ------------------------------------------------------------------------------

  registerRun(cmd: {
    runId: string | null;
    resumeId: string | null;
  }): Result<{ run_id: string; notify_seq: number }> {
    const active = this.core?.run?.runId ?? null;
    return this.decide(
      (core) => core,
      (session, now) =>
        registerRun(session, { runId: cmd.runId ?? newId("run"), resumeId: cmd.resumeId }, now),
      // Registering the active run again changes nothing, so it records nothing either.
      (value) =>
        value.run_id === active
          ? []
          : [{ type: "run_registered", run_id: value.run_id, resume_id: cmd.resumeId }],
    );
  }

  suspend(cmd: {
    runId: string;
    handles: string[];
    wake: Wake;
    ceilingMs: number | null;
  }): Result<SessionView> {
    const result = this.decide(
      (core, sql) => ({ ...core, jobs: store.loadJobs(sql, cmd.handles, false) }),
      (session, now) => suspendRun(session, { ...cmd, resumeId: newId("rs") }, this.ctxAt(now)),
      (_, state) => [
        {
          type: "run_suspended",
          run_id: cmd.runId,
          waiting_for: state.wait?.handles ?? [],
          wake: cmd.wake,
          ceiling_at: state.wait === null ? null : new Date(state.wait.ceilingAt).toISOString(),
        },
      ],
    );
    return result.ok ? this.viewOf(this.core) : result;
  }

  finish(cmd: { runId: string }): Result<SessionView> {
    let pending = 0;
    const result = this.decide(
      (core, sql, now) => {
        pending = store.countPending(sql, now);
        return core;
      },
      (session, now) => finishRun(session, { ...cmd, resumeId: newId("rs"), pending }, now),
      (_, state) => [{ type: "run_finished", run_id: cmd.runId, status: sessionStatus(state) }],
    );
    return result.ok ? this.viewOf(this.core) : result;
  }

  async notifications(cmd: {
    runId: string;
    after: number;
    waitMs: number;
  }): Promise<Result<{ notify_seq: number; pending: number }>> {
    const snapshot = (): Result<{ notify_seq: number; pending: number }> => {
      const core = this.core;
      if (core === null) return fail("not_found", "no such session");
      const pending = this.read((sql) => store.countPending(sql, Date.now()));
      return { ok: true, value: { notify_seq: core.notifySeq, pending } };
    };
    if (this.core === null) return fail("not_found", "no such session");
    const notActive = requireActiveRun(this.core, cmd.runId);
    if (notActive) return notActive;
    if (this.core.notifySeq > cmd.after || cmd.waitMs === 0) return snapshot();
    await this.waiters.wait(cmd.waitMs);
    return snapshot();
  }
}
