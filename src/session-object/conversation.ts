// Sessions, messages and runs: what the SessionObject's RPC methods of the conversation do, as
// plain functions over the kernel. The rules are the domain's; HTTP status codes are src/http's.

import { quotasFor } from "../domain/config";
import { fail, type Result } from "../domain/errors";
import { MESSAGE_PAGE_MAX_BYTES } from "../domain/limits";
import { longPollRefusal } from "../domain/quotas";
import {
  appendRule,
  createRule,
  finishRule,
  registerRule,
  requireActiveRun,
  suspendRule,
} from "../domain/session";
import type { Core, Role, Wake } from "../domain/state";
import { type MessageView, messageView, type SessionView, sessionView } from "../domain/view";
import { type Kernel, newId } from "./kernel";
import * as store from "./store";
import { adoptPlace, givePlaceBack, takePlace } from "./tenant-places";
import { run } from "./timers";

/** The session view, counted in SQL: pending and claimed items, running and done jobs. */
export function viewOf(k: Kernel, core: Core | null): Result<SessionView> {
  if (core === null) return fail("not_found", "no such session");
  return {
    ok: true,
    value: k.read((sql) => {
      const pending = store.countPending(sql, Date.now());
      const inbox = { pending, claimed: core.unacked - pending };
      return sessionView(core, { inbox, jobs: store.countJobs(sql) });
    }),
  };
}

/**
 * Creates the session, taking its place in the tenant's sessions quota first; a create that commits
 * nothing gives a place it took back. An existing id is refused without touching the count.
 */
export function create(k: Kernel, cmd: CreateCmd): Promise<Result<SessionView>> {
  return k.oneLifecycleChange(async () => {
    if (k.core !== null) {
      await adoptPlace(k, k.core.tenant, k.core.id);
      return createNow(k, cmd);
    }
    const place = await takePlace(k, cmd.tenant, cmd.id);
    if (typeof place !== "string") return place;
    let result: Result<SessionView>;
    try {
      result = createNow(k, cmd);
    } catch (error) {
      if (place === "admitted") await givePlaceBack(k, cmd.tenant, cmd.id);
      throw error;
    }
    // An id that held a place already (a lost release) keeps it whatever the create answered.
    if (!result.ok && place === "admitted") await givePlaceBack(k, cmd.tenant, cmd.id);
    return result;
  });
}

interface CreateCmd {
  tenant: string;
  id: string;
  resumeUrl: string | null;
  /** Absent: none (the callers that predate bindings name none). */
  resumeBinding?: string | null;
  metadata: Record<string, unknown>;
}

function createNow(k: Kernel, cmd: CreateCmd): Result<SessionView> {
  // A session that exists is refused by the rule; only a new one needs the schema first.
  if (k.core === null) k.ensureSchema();
  const result = run(k, createRule, {
    ...cmd,
    resumeBinding: cmd.resumeBinding ?? null,
    lifetime: newId("lt"),
  });
  if (!result.ok) return result;
  // A new lifetime holds no job and no inbox item: its view needs no count, so nothing after the
  // commit can fail it (a create answered 503 past the heap ceiling committed nothing).
  const core = k.core;
  return core === null
    ? viewOf(k, core)
    : { ok: true, value: sessionView(core, { inbox: NO_ITEMS, jobs: NO_JOBS }) };
}

const NO_ITEMS = { pending: 0, claimed: 0 } as const;
const NO_JOBS = { running: 0, done: 0 } as const;

/**
 * Ends the lifetime: every row, the schema and the alarm go; the next create starts afresh. Only
 * the delete of a session that existed gives its place back.
 */
export function remove(k: Kernel, cmd: { by: "agent" | "operator" }): Promise<Result<null>> {
  return k.oneLifecycleChange(async () => {
    const core = k.core;
    if (core === null) return fail("not_found", "no such session");
    // The trail goes with the storage it lives in (contract: a deleted session keeps nothing), so
    // an operator's delete leaves this line in the Worker's log instead.
    if (cmd.by === "operator") {
      console.log(`operator deleted session ${core.tenant}/${core.id} (${core.lifetime})`);
    }
    await k.wipe();
    await givePlaceBack(k, core.tenant, core.id);
    return { ok: true, value: null };
  });
}

export const appendMessage = (
  k: Kernel,
  cmd: { role: Role; content: unknown; metadata: Record<string, unknown> },
): Result<{ index: number }> => run(k, appendRule, cmd);

export function listMessages(
  k: Kernel,
  cmd: { after: number; before: number | null; limit: number },
): Result<{ messages: MessageView[]; next_after: number | null }> {
  if (k.core === null) return fail("not_found", "no such session");
  const page = k.read((sql) =>
    store.listMessages(sql, { ...cmd, maxBytes: MESSAGE_PAGE_MAX_BYTES }),
  );
  return {
    ok: true,
    value: { messages: page.messages.map(messageView), next_after: page.nextAfter },
  };
}

export const registerRun = (
  k: Kernel,
  cmd: { runId: string | null; resumeId: string | null; limited?: boolean },
): Result<{ run_id: string; notify_seq: number }> =>
  run(k, registerRule, {
    runId: cmd.runId ?? newId("run"),
    resumeId: cmd.resumeId,
    ...(cmd.limited === true ? { limited: true } : {}),
  });

export function suspend(
  k: Kernel,
  cmd: { runId: string; handles: string[]; wake: Wake; ceilingMs: number | null },
): Result<SessionView> {
  const result = run(k, suspendRule, { ...cmd, resumeId: newId("rs") });
  return result.ok ? viewOf(k, k.core) : result;
}

export function finish(k: Kernel, cmd: { runId: string }): Result<SessionView> {
  const result = run(k, finishRule, { ...cmd, resumeId: newId("rs") });
  return result.ok ? viewOf(k, k.core) : result;
}

/** The run's long-poll: answers once `notify_seq` passes `after`, or after `waitMs`. */
export async function notifications(
  k: Kernel,
  cmd: { runId: string; after: number; waitMs: number },
): Promise<Result<{ notify_seq: number; pending: number }>> {
  const snapshot = (): Result<{ notify_seq: number; pending: number }> => {
    const core = k.core;
    if (core === null) return fail("not_found", "no such session");
    const pending = k.read((sql) => store.countPending(sql, Date.now()));
    return { ok: true, value: { notify_seq: core.notifySeq, pending } };
  };
  const core = k.core;
  if (core === null) return fail("not_found", "no such session");
  const notActive = requireActiveRun(core, cmd.runId);
  if (notActive) return notActive;
  if (core.notifySeq > cmd.after || cmd.waitMs === 0) return snapshot();
  // Counted here, where the waiters live: one object is one thread, so the count is exact.
  const crowded = longPollRefusal(
    k.waiters.open,
    quotasFor(k.config, core.tenant).longPollsPerSession,
    "session",
  );
  if (crowded !== null) return crowded;
  await k.waiters.wait(cmd.waitMs);
  return snapshot();
}
