// Operator actions and operational reads of one session, as plain functions over the loop:
// the audit trail, redeliver, expire-wait, mark-lost, stats and the index entry.

import type { StoredEvent } from "../domain/audit";
import { fail, type Result } from "../domain/errors";
import type { IndexEntry } from "../domain/index-entry";
import type { CompletionReply } from "../domain/jobs";
import { cancelRule } from "../domain/liveness";
import { expireWaitRule, markLostRule, redeliverRule } from "../domain/operator";
import type { SessionView } from "../domain/view";
import { viewOf } from "./conversation";
import { newId, type SessionLoop } from "./loop";

/** The audit trail, oldest first, paged by seq. */
export function events(
  loop: SessionLoop,
  cmd: { after: number; limit: number },
): Result<{ events: StoredEvent[]; next_after: number | null }> {
  if (loop.core === null) return fail("not_found", "no such session");
  return { ok: true, value: loop.store.read((sql) => loop.store.audit.page(sql, Date.now(), cmd)) };
}

export const redeliver = (loop: SessionLoop): Result<{ resume_id: string }> =>
  loop.run(redeliverRule, { resumeId: newId("rs") });

export function expireWaitNow(loop: SessionLoop): Result<SessionView> {
  const result = loop.run(expireWaitRule, { resumeId: newId("rs") });
  return result.ok ? viewOf(loop, loop.core) : result;
}

export const markLost = (loop: SessionLoop, cmd: { handle: string }): Result<CompletionReply> =>
  loop.run(markLostRule, { handle: cmd.handle, resumeId: newId("rs") });

export const cancel = (
  loop: SessionLoop,
  cmd: { handle: string },
): Result<{ cancel_requested: true }> => loop.run(cancelRule("operator"), cmd);

/** Operational counters since this object started: what a session costs in billed units. */
export function stats(loop: SessionLoop) {
  if (loop.core === null) return fail("not_found", "no such session");
  const { store, scheduler, indexer } = loop;
  return {
    ok: true as const,
    value: {
      rows_read: store.meter.rowsRead,
      rows_written: store.meter.rowsWritten,
      database_bytes: store.databaseSize,
      alarms: scheduler.alarms,
      index_rows_written: indexer.rowsWritten,
      sql_statements: store.meter.statements.size,
    },
  };
}

/** This session's index entry now, sent to the index again: the list route's repair of a stale row. */
export function indexEntry(loop: SessionLoop): Result<IndexEntry> {
  const keys = loop.indexKeys();
  if (keys === null) return fail("not_found", "no such session");
  loop.keepAlive(loop.indexer.resend(keys));
  const entry = loop.indexer.entryNow();
  return entry === null ? fail("not_found", "no such session") : { ok: true, value: entry };
}
