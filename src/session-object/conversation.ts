// Sessions, messages and runs: what the SessionObject's RPC methods of the conversation do, as
// plain functions over the loop. The rules are the domain's; HTTP status codes are src/http's.

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
import { willWake } from "../domain/wake-path";
import type { Lifetime } from "./lifetime";
import { newId, type SessionLoop } from "./loop";
import { countPending } from "./store/inbox";
import { countJobs } from "./store/jobs";
import { listMessages as messagePage } from "./store/messages";
import { readRunner, type SessionRunner, type StoredRunner, writeRunner } from "./store/runner";
import { adoptPlace, givePlaceBack, takePlace } from "./tenant-places";

/** The session view, counted in SQL: pending and claimed items, running and done jobs. */
export function viewOf(loop: SessionLoop, core: Core | null): Result<SessionView> {
  if (core === null) return fail("not_found", "no such session");
  return {
    ok: true,
    value: loop.store.read((sql) => {
      const pending = countPending(sql, Date.now());
      const inbox = { pending, claimed: core.unacked - pending };
      const runnerUrl = readRunner(sql)?.url ?? null;
      return sessionView(core, { inbox, jobs: countJobs(sql), runnerUrl }, loop.wakeVia(core));
    }),
  };
}

/**
 * Creates the session, taking its place in the tenant's sessions quota first; a create that commits
 * nothing gives a place it took back. An existing id is refused without touching the count.
 */
export function create(lifetime: Lifetime, cmd: CreateCmd): Promise<Result<SessionView>> {
  const { loop } = lifetime;
  return lifetime.oneLifecycleChange(async () => {
    if (loop.core !== null) {
      await adoptPlace(lifetime, loop.core.tenant, loop.core.id);
      return createNow(loop, cmd);
    }
    const place = await takePlace(lifetime, cmd.tenant, cmd.id);
    if (typeof place !== "string") return place;
    let result: Result<SessionView>;
    try {
      result = createNow(loop, cmd);
    } catch (error) {
      if (place === "admitted") await givePlaceBack(lifetime, cmd.tenant, cmd.id);
      throw error;
    }
    // An id that held a place already (a lost release) keeps it whatever the create answered.
    if (!result.ok && place === "admitted") await givePlaceBack(lifetime, cmd.tenant, cmd.id);
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
  /** Checked against the runner allowlist by the caller; absent: none. */
  runner?: SessionRunner | null;
}

function createNow(loop: SessionLoop, cmd: CreateCmd): Result<SessionView> {
  // A session that exists is refused by the rule; only a new one needs the schema first.
  if (loop.core === null) loop.store.migrate();
  const { runner = null, ...session } = cmd;
  const result = loop.run(createRule, {
    ...session,
    resumeBinding: cmd.resumeBinding ?? null,
    lifetime: newId("lt"),
  });
  if (!result.ok) return result;
  // In the same synchronous step as the create: no request sees the session without its runner.
  if (runner !== null) loop.store.transaction((sql) => writeRunner(sql, runner));
  // A new lifetime holds no job and no inbox item: its view needs no count, so nothing after the
  // commit can fail it (a create answered 503 past the heap ceiling committed nothing).
  const core = loop.core;
  return core === null
    ? viewOf(loop, core)
    : {
        ok: true,
        value: sessionView(
          core,
          { inbox: NO_ITEMS, jobs: NO_JOBS, runnerUrl: runner?.url ?? null },
          loop.wakeVia(core),
        ),
      };
}

const NO_ITEMS = { pending: 0, claimed: 0 } as const;
const NO_JOBS = { running: 0, done: 0 } as const;

/**
 * Ends the lifetime: every row, the schema and the alarm go; the next create starts afresh. Only
 * the delete of a session that existed gives its place back.
 */
export function remove(
  lifetime: Lifetime,
  cmd: { by: "agent" | "operator" },
): Promise<Result<null>> {
  return lifetime.oneLifecycleChange(async () => {
    const core = lifetime.loop.core;
    if (core === null) return fail("not_found", "no such session");
    // The trail goes with the storage it lives in (contract: a deleted session keeps nothing), so
    // an operator's delete leaves this line in the Worker's log instead.
    if (cmd.by === "operator") {
      console.log(`operator deleted session ${core.tenant}/${core.id} (${core.lifetime})`);
    }
    await lifetime.wipe();
    await givePlaceBack(lifetime, core.tenant, core.id);
    return { ok: true, value: null };
  });
}

/** Names the session's runner (a sandbox was replaced), or removes it (null). */
export function setRunner(
  loop: SessionLoop,
  cmd: { runner: SessionRunner | null },
): Result<SessionView> {
  if (loop.core === null) return fail("not_found", "no such session");
  loop.store.transaction((sql) => writeRunner(sql, cmd.runner));
  return viewOf(loop, loop.core);
}

/**
 * What the MCP tools need of the session: the runner they call (token included: never for an
 * answer) and the session's own wake targets.
 */
export function toolContext(loop: SessionLoop): Result<{
  runner: StoredRunner | null;
  willWake: boolean;
}> {
  const core = loop.core;
  if (core === null) return fail("not_found", "no such session");
  return {
    ok: true,
    value: { runner: loop.store.read(readRunner), willWake: willWake(loop.wakeVia(core)) },
  };
}

export const appendMessage = (
  loop: SessionLoop,
  cmd: { role: Role; content: unknown; metadata: Record<string, unknown> },
): Result<{ index: number }> => loop.run(appendRule, cmd);

export function listMessages(
  loop: SessionLoop,
  cmd: { after: number; before: number | null; limit: number },
): Result<{ messages: MessageView[]; next_after: number | null }> {
  if (loop.core === null) return fail("not_found", "no such session");
  const page = loop.store.read((sql) =>
    messagePage(sql, { ...cmd, maxBytes: MESSAGE_PAGE_MAX_BYTES }),
  );
  return {
    ok: true,
    value: { messages: page.messages.map(messageView), next_after: page.nextAfter },
  };
}

export const registerRun = (
  loop: SessionLoop,
  cmd: { runId: string | null; resumeId: string | null; limited?: boolean },
): Result<{ run_id: string; notify_seq: number }> =>
  loop.run(registerRule, {
    runId: cmd.runId ?? newId("run"),
    resumeId: cmd.resumeId,
    ...(cmd.limited === true ? { limited: true } : {}),
  });

export function suspend(
  loop: SessionLoop,
  cmd: { runId: string; handles: string[]; wake: Wake; ceilingMs: number | null },
): Result<SessionView> {
  const result = loop.run(suspendRule, { ...cmd, resumeId: newId("rs") });
  return result.ok ? viewOf(loop, loop.core) : result;
}

export function finish(loop: SessionLoop, cmd: { runId: string }): Result<SessionView> {
  const result = loop.run(finishRule, { ...cmd, resumeId: newId("rs") });
  return result.ok ? viewOf(loop, loop.core) : result;
}

/** The run's long-poll: answers once `notify_seq` passes `after`, or after `waitMs`. */
export async function notifications(
  loop: SessionLoop,
  cmd: { runId: string; after: number; waitMs: number },
): Promise<Result<{ notify_seq: number; pending: number }>> {
  const snapshot = (): Result<{ notify_seq: number; pending: number }> => {
    const core = loop.core;
    if (core === null) return fail("not_found", "no such session");
    const pending = loop.store.countPending(Date.now());
    return { ok: true, value: { notify_seq: core.notifySeq, pending } };
  };
  const core = loop.core;
  if (core === null) return fail("not_found", "no such session");
  const notActive = requireActiveRun(core, cmd.runId);
  if (notActive) return notActive;
  if (core.notifySeq > cmd.after || cmd.waitMs === 0) return snapshot();
  // Counted here, where the waiters live: one object is one thread, so the count is exact.
  const crowded = longPollRefusal(
    loop.waiters.open,
    quotasFor(loop.config, core.tenant).longPollsPerSession,
    "session",
  );
  if (crowded !== null) return crowded;
  await loop.waiters.wait(cmd.waitMs);
  return snapshot();
}
