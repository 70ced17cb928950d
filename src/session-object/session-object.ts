// The session Durable Object (wrangler.toml binds this class): operator actions and operational
// reads on top of the agent surface. The layers beneath, from the core out: session-shell (load →
// decide → persist), session-timers (the alarm), session-conversation, session-exec-inbox.

import type { StoredEvent } from "../domain/audit";
import { fail, type Result } from "../domain/errors";
import type { IndexEntry } from "../domain/index-entry";
import type { CompletionReply } from "../domain/jobs";
import { expireWaitNow, markLost, redeliverFailed } from "../domain/operator";
import type { SessionView } from "../domain/view";
import { SessionExecInbox } from "./session-exec-inbox";
import { newId } from "./session-shell";
import * as store from "./store";

export class SessionObject extends SessionExecInbox {
  // ---- operators -------------------------------------------------------------------------

  /** The audit trail, oldest first, paged by seq. */
  events(cmd: {
    after: number;
    limit: number;
  }): Result<{ events: StoredEvent[]; next_after: number | null }> {
    if (this.core === null) return fail("not_found", "no such session");
    return { ok: true, value: this.read((sql) => this.audit.page(sql, Date.now(), cmd)) };
  }

  redeliver(): Result<{ resume_id: string }> {
    return this.decide(
      (core) => core,
      (session, now) => redeliverFailed(session, { resumeId: newId("rs") }, now),
      (value) => [{ type: "operator", action: "redeliver", resume_id: value.resume_id }],
    );
  }

  expireWaitNow(): Result<SessionView> {
    const result = this.decide(
      (core, sql) => ({
        ...core,
        jobs: core.wait === null ? {} : store.loadJobs(sql, core.wait.handles, false),
      }),
      (session, now) => expireWaitNow(session, { resumeId: newId("rs") }, now),
      () => [{ type: "operator", action: "expire_wait" }],
    );
    return result.ok ? this.viewOf(this.core) : result;
  }

  markLost(cmd: { handle: string }): Result<CompletionReply> {
    return this.decide(
      (core, sql) => ({ ...core, jobs: store.loadJobs(sql, [cmd.handle], true) }),
      (session, now) =>
        markLost(session, { handle: cmd.handle, resumeId: newId("rs") }, this.ctxAt(now)),
      () => [{ type: "operator", action: "mark_lost", handle: cmd.handle }],
    );
  }

  // ---- operations ------------------------------------------------------------------------

  /** Operational counters since this object started: what a session costs in billed units. */
  stats(): Result<{
    rows_read: number;
    rows_written: number;
    database_bytes: number;
    alarms: number;
    index_rows_written: number;
  }> {
    if (this.core === null) return fail("not_found", "no such session");
    return {
      ok: true,
      value: {
        rows_read: this.meter.rowsRead,
        rows_written: this.meter.rowsWritten,
        database_bytes: this.ctx.storage.sql.databaseSize,
        alarms: this.alarms,
        index_rows_written: this.indexer.rowsWritten,
      },
    };
  }

  /** This session's index entry now, sent to the index again: the list route's repair of a stale row. */
  indexEntry(): Result<IndexEntry> {
    const entry = this.indexEntryNow();
    if (entry === null) return fail("not_found", "no such session");
    this.indexer.resend();
    return { ok: true, value: entry };
  }

  /** Does nothing: the floor of a Durable Object call, for benchmarks and health checks. */
  ping(): Result<null> {
    return { ok: true, value: null };
  }
}
