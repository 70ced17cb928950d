// One run's turns: claim the inbox, put each new provider message into the conversation, run the
// model with the exec tools, store, ack; then suspend on what still runs, or finish.
import { setTimeout as sleep } from "node:timers/promises";
import { type Claim, ExecInboxError } from "@exec-inbox/client";
import { trackingContext } from "./exec-tools";
import type { KitRun } from "./kit-settings";
import { foldJournal, KEEP_CALL_HANDLES } from "./recover-stored-calls";
import {
  type RecoveredToolCall,
  recoverToolCalls,
  unwokenWaitLine,
  viewWillWake,
} from "./recover-tool-calls";
import { retrying } from "./retry";
import type { ActiveRun, SessionRecord } from "./session-record";
import { journaledHandles, type PersistedJournal, persistedJournal } from "./tool-call-journal";
import type { TurnEngine, TurnOutput } from "./turn-engine";

const MAX_ROUNDS = 8;
/** Lease waits per run for a claim whose answer was lost (each one lease long). */
const MAX_LEASE_WAITS = 2;
const KEEP_APPLIED_IDS = 4096;

// The settings with their engine live beside the settings; this module still names them.
export type { KitRun } from "./kit-settings";

/** The handles an envelope ends for the model: completed, outcome unknown, wait expired. */
const handlesOf = (claim: Claim): string[] => {
  const data = claim.envelope.body.data as { session_id?: string; handles?: string[] };
  return data.handles ?? (data.session_id === undefined ? [] : [data.session_id]);
};

/** A host that crashed after ending its run ends it again on recovery: the run is no longer active. */
async function endedAlready(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ExecInboxError && error.problem.code === "invalid_transition") return;
    throw error;
  }
}

/** Items are claimed though this run's claim returned none: an earlier claim's answer was lost. */
async function heldByLease<M>(options: KitRun<M>, sessionId: string): Promise<boolean> {
  const view = await retrying(() => options.inbox.getSession(sessionId));
  return view.inbox.claimed > 0;
}

/** Claim → model turn → store → ack, until nothing new arrives; then suspend or finish. */
export async function runTurns<M>(
  options: KitRun<M>,
  initial: SessionRecord<M>,
  run: ActiveRun,
  waitLease: boolean,
): Promise<string> {
  const { inbox, store, leaseMs = 60_000 } = options;
  const sessionId = initial.sessionId;
  let record = initial;
  let answer = "";
  if (waitLease && run.leaseExpiresAt > Date.now()) {
    // A claim held by the host that crashed comes back only when its lease ends.
    await new Promise((resolve) => setTimeout(resolve, run.leaseExpiresAt - Date.now() + 50));
  }
  let leaseWaits = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const userText = record.activeRun?.pendingUserText ?? null;
    // Stored before claiming: when the claim's answer is lost (a gateway timeout, a crash), the
    // items stay leased until then, and whoever drives this run next waits for them.
    const claimLeaseEnd = Date.now() + leaseMs;
    record = {
      ...record,
      activeRun: { ...run, leaseExpiresAt: claimLeaseEnd, pendingUserText: userText },
    };
    await store.save(record);
    const { claims } = await retrying(() => inbox.claim(sessionId, { max: 16, lease_ms: leaseMs }));
    const fresh = claims.filter((claim) => !record.applied.includes(claim.envelope.id));
    const ids = claims.map((claim) => claim.envelope.id);
    // Calls journaled by a turn that was never stored are owed a turn that gives their results.
    const journaled = (record.toolCalls ?? []).length > 0;
    if (fresh.length === 0 && userText === null && !journaled) {
      if (ids.length > 0) await retrying(() => inbox.ack(sessionId, { ids }));
      if (
        claims.length === 0 &&
        leaseWaits < MAX_LEASE_WAITS &&
        (await heldByLease(options, sessionId))
      ) {
        // Suspending now would be woken at once by the leased results, again and again until
        // the lease ends (a resume storm): wait for the lease in this run instead.
        leaseWaits++;
        round--;
        await sleep(Math.max(0, claimLeaseEnd - Date.now()) + 50);
        continue;
      }
      break;
    }
    const leaseExpiresAt = Math.max(
      claimLeaseEnd,
      ...claims.map((claim) => Date.parse(claim.lease_expires_at)),
    );
    record = { ...record, activeRun: { ...run, leaseExpiresAt, pendingUserText: userText } };
    await store.save(record);
    let turn: TurnOutput<M> & { readonly running: string[] };
    // Commands a failed attempt started still run (reserved and armed): the turn waits for them.
    const started = new Set<string>();
    // Each exec_command call is stored before the runner is asked: a host that dies before the
    // turn is stored finds it here, and its next attempt gives it a result instead of a rerun.
    const journal = persistedJournal(record.toolCalls ?? [], async (toolCalls) => {
      record = { ...record, toolCalls: [...toolCalls] };
      await store.save(record);
    });
    try {
      turn = await modelTurnWithRetries(options, record, userText, fresh, started, journal);
    } catch (error) {
      // The provider keeps failing: end the run so the session is not left `running` with nobody
      // to wake it. The claims stay unacked: their lease ends and the next run sees them.
      options.log?.(`session ${sessionId}: model failed (${String(error)}); ending the run`);
      record = { ...record, running: [...new Set([...record.running, ...started])] };
      await endTurn(options, record, run.runId);
      await store.save({ ...record, activeRun: null });
      // The calls the failed turn made go into the conversation now, before the next run's own
      // messages; when exec-inbox cannot be asked, the next turn is given them instead.
      await foldJournal(options, store, sessionId).catch((foldError: unknown) => {
        options.log?.(
          `session ${sessionId}: journaled calls left to the next turn (${String(foldError)})`,
        );
      });
      if (userText !== null) throw new ModelTurnError(sessionId, error);
      return "";
    }
    answer = turn.text;
    record = {
      ...record,
      messages: turn.messages,
      running: turn.running,
      applied: [...record.applied, ...fresh.map((c) => c.envelope.id)].slice(-KEEP_APPLIED_IDS),
      activeRun: { ...run, leaseExpiresAt, pendingUserText: null },
      // The stored messages hold every journaled call with its result now; the handles stay.
      toolCalls: [],
      callHandles: [...(record.callHandles ?? []), ...journaledHandles(journal.entries())].slice(
        -KEEP_CALL_HANDLES,
      ),
    };
    await store.save(record);
    options.afterStore?.(sessionId);
    if (ids.length > 0) await retrying(() => inbox.ack(sessionId, { ids }));
  }
  await endTurn(options, record, run.runId);
  await store.save({ ...record, activeRun: null });
  return answer;
}

/** The model (its provider) failed on every attempt: the turn was not taken. */
export class ModelTurnError extends Error {
  constructor(
    readonly sessionId: string,
    cause: unknown,
  ) {
    super(`session ${sessionId}: the model failed: ${String(cause)}`, { cause });
    this.name = "ModelTurnError";
  }
}

/** The AI SDK retries retryable API errors itself; this also covers the rest (timeouts, 5xx bodies). */
async function modelTurnWithRetries<M>(
  options: KitRun<M>,
  record: SessionRecord<M>,
  userText: string | null,
  claims: Claim[],
  started: Set<string>,
  journal: PersistedJournal,
): ReturnType<typeof modelTurn<M>> {
  const attempts = options.modelAttempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await modelTurn(options, record, userText, claims, started, journal);
    } catch (error) {
      if (attempt >= attempts) throw error;
      await sleep(500 * 2 ** (attempt - 1));
    }
  }
}

/**
 * The engine's turn, and which commands still run after it (a claim ends its handles). `started`
 * keeps the background commands of every attempt, and the journal every exec_command call: a
 * retried turn (its provider failed midway, or its host died) forgets the attempt's conversation,
 * but is given each call it made with its result, and waits for the commands still running.
 */
async function modelTurn<M>(
  options: KitRun<M>,
  record: SessionRecord<M>,
  userText: string | null,
  claims: Claim[],
  started: Set<string>,
  journal: PersistedJournal,
): Promise<TurnOutput<M> & { readonly running: string[] }> {
  const recovered = await recoverToolCalls(
    options.inbox,
    record.sessionId,
    journal.entries(),
    options,
  );
  for (const call of recovered) if (call.running !== null) started.add(call.running);
  const running = new Set([...record.running, ...started]);
  for (const claim of claims) for (const handle of handlesOf(claim)) running.delete(handle);
  const turn = await options.turn({
    sessionId: record.sessionId,
    messages: record.messages,
    userText,
    claims,
    tools: {
      ...trackingContext({ ...options, sessionId: record.sessionId }, running, started),
      journal,
    },
    recovered,
  });
  return { ...withRecovered(options.turn, turn, recovered), running: [...running] };
}

/**
 * The turn's messages with every recovered call in them: an engine that left `input.recovered`
 * out would drop those calls from the stored conversation, so the kit appends the missing ones.
 */
function withRecovered<M>(
  engine: TurnEngine<M>,
  turn: TurnOutput<M>,
  recovered: readonly RecoveredToolCall[],
): TurnOutput<M> {
  const format = engine.toolCallFormat;
  if (recovered.length === 0 || format?.toolCallIds === undefined) return turn;
  if (format.recoveredMessages === undefined) return turn;
  const present = new Set(format.toolCallIds(turn.messages));
  const missing = recovered.filter((call) => !present.has(call.toolCallId));
  if (missing.length === 0) return turn;
  return { ...turn, messages: [...turn.messages, ...format.recoveredMessages(missing)] };
}

/** Commands still running: wait for them (keeping a wait that already covers them); else finish. */
async function endTurn<M>(
  options: KitRun<M>,
  record: SessionRecord<M>,
  runId: string,
): Promise<void> {
  const { inbox, wake = "all", ceilingMs } = options;
  const sessionId = record.sessionId;
  if (record.running.length > 0) {
    const view = await inbox.getSession(sessionId);
    const armed = view.waiting_for_bash;
    const same =
      armed !== null &&
      armed.wake === wake &&
      armed.handles.length === record.running.length &&
      record.running.every((handle) => armed.handles.includes(handle));
    if (!same) {
      await endedAlready(
        retrying(() =>
          inbox.suspend(sessionId, runId, {
            waiting_for: record.running,
            wake,
            ...(ceilingMs === undefined ? {} : { ceiling_ms: ceilingMs }),
          }),
        ),
      );
      options.log?.(`session ${sessionId}: suspended on ${record.running.join(", ")}`);
      // will_wake was false: the model was told to check with write_stdin; the host should know.
      if (viewWillWake(view) === false) {
        options.log?.(`session ${sessionId}: ${unwokenWaitLine(record.running)}`);
      }
      return;
    }
  }
  await endedAlready(retrying(() => inbox.finishRun(sessionId, runId)));
  options.log?.(`session ${sessionId}: run ${runId} finished`);
}
