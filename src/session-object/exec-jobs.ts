// Exec jobs: reservations, the completion path and pulls, as plain functions over the loop.
// Minting callback tokens is here (the settings hold the secrets); the rules are the domain's.

import { tokenForReservation } from "../auth/callback-token";
import { heartbeatTimeoutFor } from "../domain/config";
import { fail, type Result } from "../domain/errors";
import { jobPrefix, partReleaseRule, partUploadRule, type UploadCmd } from "../domain/full-output";
import {
  type CompleteCmd,
  type CompletionReply,
  callbackJob,
  completionRule,
  jobAndTombstone,
  pullJob,
  pullNeeds,
  reserveRule,
} from "../domain/jobs";
import { JOB_PAGE_MAX_BYTES } from "../domain/limits";
import {
  cancelRule,
  type HeartbeatCmd,
  type HeartbeatReply,
  heartbeatRule,
  refusalIsHeartbeat,
} from "../domain/liveness";
import type { FullOutput } from "../domain/state";
import { type JobSummaryView, type JobView, jobSummaryView, jobView } from "../domain/view";
import { willWake } from "../domain/wake-path";
import { newId, type SessionLoop } from "./loop";
import { countRunning, listJobs as jobPage } from "./store/jobs";
import { fullOutputBytesHeld } from "./store/outputs";

export function reserveJob(
  loop: SessionLoop,
  cmd: { handle: string; command: string; heartbeatTimeoutMs?: number | null },
): Result<{ job: JobView; token: string; created: boolean; willWake: boolean }> {
  const core = loop.core;
  if (core === null) return fail("not_found", "no such session");
  const result = loop.run(reserveRule, {
    handle: cmd.handle,
    command: cmd.command,
    heartbeatTimeoutMs:
      cmd.heartbeatTimeoutMs === undefined
        ? heartbeatTimeoutFor(loop.config, core.tenant)
        : cmd.heartbeatTimeoutMs,
    timeoutNamed: cmd.heartbeatTimeoutMs !== undefined,
    running: () => loop.store.read(countRunning),
    mint: (existing, seq) =>
      tokenForReservation(existing, loop.config.callbackSecrets, {
        tenant: core.tenant,
        sessionId: core.id,
        lifetime: core.lifetime,
        handle: cmd.handle,
        seq,
      }),
  });
  if (!result.ok) return result;
  const { job, created } = result.value;
  const wakes = willWake(loop.wakeVia(core));
  return {
    ok: true,
    value: { job: jobView(job), token: job.callbackToken, created, willWake: wakes },
  };
}

/** The `write_stdin` pull: a read over the rows its needs name. */
export function getJob(loop: SessionLoop, cmd: { handle: string }): Result<JobView> {
  const core = loop.core;
  if (core === null) return fail("not_found", "no such session");
  const now = Date.now();
  const job = pullJob(loop.load(core, pullNeeds(cmd.handle), now).session, cmd.handle);
  return job.ok ? { ok: true, value: jobView(job.value) } : job;
}

export function listJobs(
  loop: SessionLoop,
  cmd: { status: "running" | "done" | null; after: number; limit: number },
): Result<{ jobs: JobSummaryView[]; next: number | null }> {
  if (loop.core === null) return fail("not_found", "no such session");
  const page = loop.store.read((sql) => jobPage(sql, { ...cmd, maxBytes: JOB_PAGE_MAX_BYTES }));
  return { ok: true, value: { jobs: page.jobs.map(jobSummaryView), next: page.next } };
}

export function complete(
  loop: SessionLoop,
  cmd: Omit<CompleteCmd, "resumeId">,
): Result<CompletionReply> {
  const result = loop.run(completionRule, { ...cmd, resumeId: newId("rs") });
  if (!result.ok && refusalIsHeartbeat(result.code)) {
    loop.execute(heartbeatRule, {
      lifetime: cmd.lifetime,
      handle: cmd.handle,
      tokenSeq: cmd.tokenSeq,
    });
  }
  return result;
}

/**
 * A heartbeat commits its one row and nothing follows: it moves no timer earlier (the alarm,
 * on the earliest deadline, finds a later one when it fires), wakes nobody and changes no
 * index entry.
 */
export function heartbeat(loop: SessionLoop, cmd: HeartbeatCmd): Result<HeartbeatReply> {
  const committed = loop.execute(heartbeatRule, cmd);
  return committed.ok ? { ok: true, value: committed.value } : committed;
}

export const cancel = (
  loop: SessionLoop,
  cmd: { handle: string },
): Result<{ cancel_requested: true }> => loop.run(cancelRule("agent"), cmd);

/**
 * Before a full-output part streams to R2: the job's tally takes it (one row) if the session's
 * quota has room for it, and the answer is the job's prefix. Nothing follows the commit: no timer, wake or index entry moves.
 */
export function acceptPart(
  loop: SessionLoop,
  cmd: Omit<UploadCmd, "maxBytes">,
): Result<{ prefix: string }> {
  const committed = loop.execute(partUploadRule, {
    ...cmd,
    maxBytes: 2 * loop.config.maxFullOutputBytes,
    held: () => loop.store.read(fullOutputBytesHeld),
  });
  return committed.ok ? { ok: true, value: { prefix: committed.value } } : committed;
}

/** After a part's put failed: the job's tally gives its bytes back (nothing was stored). */
export function releasePart(loop: SessionLoop, cmd: Omit<UploadCmd, "maxBytes">): Result<null> {
  const committed = loop.execute(partReleaseRule, cmd);
  return committed.ok ? { ok: true, value: null } : committed;
}

/**
 * Whether a callback token's job still stands (a read): after a part landed in R2, a job that
 * was purged or a lifetime that ended meanwhile means the part must go again.
 */
export function callbackFence(
  loop: SessionLoop,
  cmd: { lifetime: string; handle: string; tokenSeq: number | null },
): Result<null> {
  const core = loop.core;
  const session =
    core === null || core.lifetime !== cmd.lifetime
      ? null
      : loop.load(core, jobAndTombstone(cmd.handle, cmd.tokenSeq === null, false), Date.now())
          .session;
  const found = callbackJob(session, cmd);
  return found.ok ? { ok: true, value: null } : found;
}

/** The full output of a job and where its parts are: for the agent's ranged read. */
export function fullOutput(
  loop: SessionLoop,
  cmd: { handle: string },
): Result<{ prefix: string; output: FullOutput }> {
  const core = loop.core;
  if (core === null) return fail("not_found", "no such session");
  const job = pullJob(loop.load(core, pullNeeds(cmd.handle), Date.now()).session, cmd.handle);
  if (!job.ok) return job;
  const output = job.value.result?.fullOutput;
  if (output === undefined) return fail("not_found", `job ${cmd.handle} has no full output`);
  const prefix = jobPrefix({
    tenant: core.tenant,
    sessionId: core.id,
    lifetime: core.lifetime,
    handle: job.value.handle,
    seq: job.value.seq,
  });
  return { ok: true, value: { prefix, output } };
}
