// Operator actions and operational reads of one session, as plain functions over the kernel:
// the audit trail, redeliver, expire-wait, mark-lost, stats and the index entry.

import type { StoredEvent } from "../domain/audit";
import { fail, type Result } from "../domain/errors";
import type { IndexEntry } from "../domain/index-entry";
import type { CompletionReply } from "../domain/jobs";
import { cancelRule } from "../domain/liveness";
import { expireWaitRule, markLostRule, redeliverRule } from "../domain/operator";
import type { SessionView } from "../domain/view";
import { viewOf } from "./conversation";
import { type Kernel, newId } from "./kernel";
import { run } from "./timers";

/** The audit trail, oldest first, paged by seq. */
export function events(
  k: Kernel,
  cmd: { after: number; limit: number },
): Result<{ events: StoredEvent[]; next_after: number | null }> {
  if (k.core === null) return fail("not_found", "no such session");
  return { ok: true, value: k.read((sql) => k.audit.page(sql, Date.now(), cmd)) };
}

export const redeliver = (k: Kernel): Result<{ resume_id: string }> =>
  run(k, redeliverRule, { resumeId: newId("rs") });

export function expireWaitNow(k: Kernel): Result<SessionView> {
  const result = run(k, expireWaitRule, { resumeId: newId("rs") });
  return result.ok ? viewOf(k, k.core) : result;
}

export const markLost = (k: Kernel, cmd: { handle: string }): Result<CompletionReply> =>
  run(k, markLostRule, { handle: cmd.handle, resumeId: newId("rs") });

export const cancel = (k: Kernel, cmd: { handle: string }): Result<{ cancel_requested: true }> =>
  run(k, cancelRule("operator"), cmd);

export function stats(k: Kernel): Result<ReturnType<Kernel["stats"]>> {
  if (k.core === null) return fail("not_found", "no such session");
  return { ok: true, value: k.stats() };
}

/** This session's index entry now, sent to the index again: the list route's repair of a stale row. */
export function indexEntry(k: Kernel): Result<IndexEntry> {
  const entry = k.indexEntryNow();
  if (entry === null) return fail("not_found", "no such session");
  k.indexer.resend();
  return { ok: true, value: entry };
}
