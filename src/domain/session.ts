// Session lifecycle rules: create, delete, human messages, run register/suspend/finish.
// Validation of wire input is left to the HTTP layer; persistence to the shell.

import { assertNever } from "./assert-never";
import type { Ctx, Decision, Rule } from "./decision";
import { coreOnly, decided } from "./decision";
import { fail } from "./errors";
import { messageBytesRefusal, type Quotas } from "./quotas";
import { copyOf, own } from "./records";
import type { Core, Message, Resume, Role, Session, Wake } from "./state";
import { jobStatus, resumeDeliveredAt, resumeEndedAt, resumeFields, sessionStatus } from "./state";
import { utf8Bytes } from "./text";
import { reasonForResult, scheduleResume } from "./wake";

export function createSession(
  existing: Session | null,
  cmd: {
    tenant: string;
    id: string;
    lifetime: string;
    resumeUrl: string | null;
    resumeBinding: string | null;
    metadata: Readonly<Record<string, unknown>>;
  },
  now: number,
): Decision<Session> {
  if (existing !== null) return fail("session_exists", `session ${cmd.id} already exists`);
  const session: Session = {
    tenant: cmd.tenant,
    id: cmd.id,
    lifetime: cmd.lifetime,
    createdAt: now,
    resumeUrl: cmd.resumeUrl,
    resumeBinding: cmd.resumeBinding,
    metadata: cmd.metadata,
    messages: [],
    messageCount: 0,
    messageBytes: 0,
    jobSeq: 0,
    unacked: 0,
    run: null,
    wait: null,
    resume: null,
    notifySeq: 0,
    generation: 0,
    livenessDueAt: null,
    jobs: {},
    inbox: {},
    purged: {},
    finishedRuns: {},
  };
  return decided(session, session);
}

export function deleteSession(session: Session | null): Decision<null> {
  if (session === null) return fail("not_found", "no such session");
  return decided(null, null);
}

export function appendMessage(
  session: Session,
  cmd: { role: Role; content: unknown; metadata: Readonly<Record<string, unknown>> },
  now: number,
  quotas?: Quotas,
): Decision<{ index: number }> {
  // The same measure as the 1 MiB limit on one message (src/http/sessions.ts).
  const bytes = utf8Bytes(
    JSON.stringify({ role: cmd.role, content: cmd.content, metadata: cmd.metadata }),
  );
  const full =
    quotas === undefined ? null : messageBytesRefusal(session.messageBytes, bytes, quotas);
  if (full !== null) return full;
  const message: Message = { index: session.messageCount, ...cmd, createdAt: now };
  return decided(
    {
      ...session,
      messages: [...session.messages, message],
      messageCount: message.index + 1,
      messageBytes: session.messageBytes + bytes,
    },
    { index: message.index },
    [],
    [{ type: "insert_message", message }],
  );
}

/** A run takes every resume that has not ended yet, and a failed one (see registerRun). */
function takenByRun(resume: Resume): boolean {
  switch (resume.state) {
    case "scheduled":
    case "delivered":
    case "no_target":
    case "failed":
      return true;
    case "completed":
      return false;
    default:
      return assertNever(resume);
  }
}

/**
 * Whether a registration is the host answering this session's wake: it names the resume the
 * session holds and no run took yet, or it is the run that took it, registering again.
 */
export function answersWake(session: Core, cmd: { runId: string; resumeId: string | null }) {
  const resume = session.resume;
  if (cmd.resumeId === null || resume === null || resume.resumeId !== cmd.resumeId) return false;
  return takenByRun(resume) || session.run?.runId === cmd.runId;
}

/**
 * `limited`: the request's token is past its rate limit. Only the registration the limit exempts
 * (`answersWake`) goes on: a `resume_id` in the body is a claim, and this is where it is checked.
 */
export function registerRun(
  session: Session,
  cmd: { runId: string; resumeId: string | null; limited?: boolean },
  now: number,
): Decision<{ run_id: string; notify_seq: number }> {
  if (cmd.limited === true && !answersWake(session, cmd)) {
    return fail(
      "rate_limited",
      "this agent token sent more requests than its rate limit allows, and this run does not answer the session's wake: retry after Retry-After seconds",
    );
  }
  if (session.run !== null) {
    if (session.run.runId === cmd.runId) {
      return decided(session, { run_id: cmd.runId, notify_seq: session.notifySeq });
    }
    return fail("run_conflict", `run ${session.run.runId} is already active`);
  }
  // A resume id the session does not hold is a typo or a stale webhook: say so rather than let
  // the run take whatever resume is pending. The host's current wake arrives with its own id.
  if (cmd.resumeId !== null && session.resume?.resumeId !== cmd.resumeId) {
    const held =
      session.resume === null ? "it has none" : `its resume is ${session.resume.resumeId}`;
    return fail(
      "invalid_transition",
      `resume ${cmd.resumeId} is not this session's resume: ${held}`,
    );
  }
  // A resume a run already took was answered: registering for it again (a replayed webhook, a
  // finished run-<resume id>) would repeat a finished run and flood the audit trail.
  if (cmd.resumeId !== null && session.resume?.state === "completed") {
    return fail(
      "invalid_transition",
      `resume ${cmd.resumeId} was already taken by a run; a finished run does not register again`,
    );
  }
  // A run id is used once per lifetime: registering a finished run again (a retried request, a
  // replayed bare run id) would start it over and record it again.
  if (own(session.finishedRuns, cmd.runId) !== undefined) {
    return fail(
      "invalid_transition",
      `run ${cmd.runId} already finished in this session lifetime; a run id is used once`,
    );
  }
  // Registering a run takes the pending resume: it is never delivered again. A failed one is
  // taken too: the host is back and sees the inbox, so nothing is left for an operator to redeliver.
  const taken = session.resume !== null && takenByRun(session.resume);
  const resume =
    session.resume !== null && taken
      ? ({
          ...resumeFields(session.resume),
          state: "completed",
          deliveredAt: resumeDeliveredAt(session.resume),
          endedAt: resumeEndedAt(session.resume) ?? now,
        } satisfies Resume)
      : session.resume;
  const run = { runId: cmd.runId, resumeId: cmd.resumeId, registeredAt: now };
  return decided({ ...session, run, resume }, { run_id: cmd.runId, notify_seq: session.notifySeq });
}

export function requireActiveRun(session: Core, runId: string) {
  return session.run?.runId === runId
    ? null
    : fail("invalid_transition", `run ${runId} is not the active run of this session`);
}

export function suspendRun(
  session: Session,
  cmd: {
    runId: string;
    handles: readonly string[];
    wake: Wake;
    ceilingMs: number | null;
    resumeId: string;
  },
  ctx: Ctx,
): Decision<Session> {
  const notActive = requireActiveRun(session, cmd.runId);
  if (notActive) return notActive;
  const handles = [...new Set(cmd.handles)];
  const missing = handles.filter((handle) => own(session.jobs, handle) === undefined);
  if (missing.length > 0) {
    return fail("not_found", `not a job of this session lifetime: ${missing.join(", ")}`);
  }
  const jobs = handles.flatMap((handle) => own(session.jobs, handle) ?? []);
  const running = jobs.filter((job) => jobStatus(job) === "running").map((job) => job.handle);
  const met = cmd.wake === "all" ? running.length === 0 : running.length < handles.length;
  const ended: Session = { ...session, run: null, wait: null };
  if (!met) {
    const ceilingMs = cmd.ceilingMs ?? ctx.config.waitCeilingMs;
    const wait = {
      handles: running,
      wake: cmd.wake,
      since: ctx.now,
      ceilingAt: ctx.now + ceilingMs,
    };
    const suspended = { ...ended, wait };
    return decided(suspended, suspended);
  }
  // The results came first: wake at once, for the reason of the last of them.
  const last = jobs
    .filter((job) => job.result !== null)
    .sort((a, b) => a.completedAt - b.completedAt)
    .at(-1);
  const reason = last === undefined ? "background_exec_completed" : reasonForResult(last);
  const woken = scheduleResume(ended, reason, cmd.resumeId, ctx.now).session;
  return decided(woken, woken);
}

/** `pending` is the count of claimable inbox items at `now` (the shell counts them in SQL). */
export function finishRun(
  session: Session,
  cmd: { runId: string; resumeId: string; pending: number },
  now: number,
): Decision<Session> {
  const notActive = requireActiveRun(session, cmd.runId);
  if (notActive) return notActive;
  const finishedRuns = copyOf(session.finishedRuns);
  finishedRuns[cmd.runId] = now;
  const ended: Session = { ...session, run: null, finishedRuns };
  const writes = [{ type: "insert_finished_run", runId: cmd.runId, finishedAt: now }] as const;
  // With a wait armed, unclaimed items travel with that wait's wake instead.
  if (ended.wait !== null || cmd.pending === 0) return decided(ended, ended, [], writes);
  const woken = scheduleResume(ended, "inbox_pending", cmd.resumeId, now).session;
  return decided(woken, woken, [], writes);
}

// ---- the rules: what each command reads, decides and records -------------------------------

type CreateCmd = Parameters<typeof createSession>[1];

export const createRule: Rule<CreateCmd, Session> = {
  needs: coreOnly,
  absent: (cmd, ctx) => createSession(null, cmd, ctx.now),
  decide: ({ session }, cmd, ctx) => createSession(session, cmd, ctx.now),
};

export const appendRule: Rule<Parameters<typeof appendMessage>[1], { index: number }> = {
  needs: coreOnly,
  decide: ({ session }, cmd, ctx) => appendMessage(session, cmd, ctx.now, ctx.config.quotas),
};

export const registerRule: Rule<
  Parameters<typeof registerRun>[1],
  { run_id: string; notify_seq: number }
> = {
  needs: (_, cmd) => ({ finishedRuns: [cmd.runId] }),
  decide: ({ session }, cmd, ctx) => registerRun(session, cmd, ctx.now),
  // Registering the active run again changes nothing, so it records nothing either.
  events: (cmd, value, _, before) =>
    before.run?.runId === value.run_id
      ? []
      : [{ type: "run_registered", run_id: value.run_id, resume_id: cmd.resumeId }],
};

type SuspendCmd = Parameters<typeof suspendRun>[1];

export const suspendRule: Rule<SuspendCmd, Session> = {
  needs: (_, cmd) => ({ jobs: { handles: cmd.handles, output: false } }),
  decide: ({ session }, cmd, ctx) => suspendRun(session, cmd, ctx),
  events: (cmd, _, state) => [
    {
      type: "run_suspended",
      run_id: cmd.runId,
      waiting_for: state.wait?.handles ?? [],
      wake: cmd.wake,
      ceiling_at: state.wait === null ? null : new Date(state.wait.ceilingAt).toISOString(),
    },
  ],
};

type FinishCmd = Omit<Parameters<typeof finishRun>[1], "pending">;

export const finishRule: Rule<FinishCmd, Session> = {
  needs: () => ({ pending: true }),
  decide: ({ session, pending }, cmd, ctx) =>
    finishRun(session, { ...cmd, pending: pending() }, ctx.now),
  events: (cmd, _, state) => [
    { type: "run_finished", run_id: cmd.runId, status: sessionStatus(state) },
  ],
};
