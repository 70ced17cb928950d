// The RPC surface of exec jobs and the inbox: reservations, the completion path, pulls, claims
// and acks. HTTP validation and status codes are left to src/http.

import { tokenForReservation } from "../auth/callback-token";
import { type AuditEvent, idsEvent } from "../domain/audit";
import { fail, type Result } from "../domain/errors";
import { ack, type Claim, claim, type InboxCounts } from "../domain/inbox";
import {
  type CompletionReply,
  completeJob,
  pullJob,
  reservationSeq,
  reserveJob,
} from "../domain/jobs";
import { CLAIM_ANSWER_MAX_BYTES, JOB_PAGE_MAX_BYTES } from "../domain/limits";
import { own } from "../domain/records";
import type { JobResult } from "../domain/state";
import { type JobSummaryView, type JobView, jobSummaryView, jobView } from "../domain/view";
import { SessionConversation } from "./session-conversation";
import { newId } from "./session-shell";
import * as store from "./store";

export abstract class SessionExecInbox extends SessionConversation {
  // ---- exec jobs -------------------------------------------------------------------------

  reserveJob(cmd: {
    handle: string;
    command: string;
  }): Result<{ job: JobView; token: string; created: boolean }> {
    const result = this.decide(
      (core, sql) => ({
        ...core,
        jobs: store.loadJobs(sql, [cmd.handle], true),
        purged: store.loadTombstones(sql, [cmd.handle]),
      }),
      (session, now) =>
        reserveJob(
          session,
          {
            ...cmd,
            callbackToken: tokenForReservation(
              own(session.jobs, cmd.handle)?.callbackToken,
              this.config.callbackSecrets,
              {
                tenant: session.tenant,
                sessionId: session.id,
                lifetime: session.lifetime,
                handle: cmd.handle,
                seq: reservationSeq(session, cmd.handle),
              },
            ),
          },
          now,
        ),
    );
    if (!result.ok) return result;
    const { job, created } = result.value;
    return { ok: true, value: { job: jobView(job), token: job.callbackToken, created } };
  }

  getJob(cmd: { handle: string }): Result<JobView> {
    const core = this.core;
    if (core === null) return fail("not_found", "no such session");
    const loaded = this.read((sql) => ({
      ...core,
      jobs: store.loadJobs(sql, [cmd.handle], true),
      purged: store.loadTombstones(sql, [cmd.handle]),
    }));
    const job = pullJob(loaded, cmd.handle);
    return job.ok ? { ok: true, value: jobView(job.value) } : job;
  }

  listJobs(cmd: {
    status: "running" | "done" | null;
    after: number;
    limit: number;
  }): Result<{ jobs: JobSummaryView[]; next: number | null }> {
    if (this.core === null) return fail("not_found", "no such session");
    const page = this.read((sql) => store.listJobs(sql, { ...cmd, maxBytes: JOB_PAGE_MAX_BYTES }));
    return {
      ok: true,
      value: {
        jobs: page.jobs.map(jobSummaryView),
        next: page.next,
      },
    };
  }

  complete(cmd: {
    lifetime: string;
    handle: string;
    tokenSeq: number | null;
    result: JobResult;
    observed: boolean;
  }): Result<CompletionReply> {
    const now = Date.now();
    const core = this.core;
    // Another lifetime's token loads nothing: the domain refuses it on the core alone.
    const loaded =
      core === null || core.lifetime !== cmd.lifetime
        ? core
        : this.read((sql) => ({
            ...core,
            jobs: store.loadJobs(sql, [cmd.handle], true),
            purged: cmd.tokenSeq === null ? store.loadTombstones(sql, [cmd.handle]) : {},
          }));
    const event = (outcome: string, disposition: string | null): AuditEvent => ({
      type: "completion",
      handle: cmd.handle,
      outcome,
      disposition,
      ...(core !== null && core.lifetime !== cmd.lifetime ? { token_lifetime: cmd.lifetime } : {}),
    });
    const result = this.commit(
      loaded,
      completeJob(loaded, { ...cmd, resumeId: newId("rs") }, this.ctxAt(now)),
      undefined,
      (reply) => [event(reply.outcome, reply.outcome === "accepted" ? reply.disposition : null)],
    );
    // A refusal changes nothing but the trail; a session that does not exist keeps no trail.
    if (!result.ok && this.core !== null) this.record(event(result.code, null));
    return result.ok ? { ok: true, value: result.value } : result;
  }

  // ---- inbox -----------------------------------------------------------------------------

  inbox(): Result<InboxCounts> {
    const core = this.core;
    if (core === null) return fail("not_found", "no such session");
    return {
      ok: true,
      value: this.read((sql) => ({
        ...this.unackedNow(core, sql),
        acked: store.countAcked(sql),
        generation: core.generation,
      })),
    };
  }

  claim(cmd: { max: number; leaseMs: number }): Result<{ claims: Claim[] }> {
    return this.decide(
      (core, sql, now) => ({
        ...core,
        inbox: store.loadClaimable(sql, now, cmd.max, CLAIM_ANSWER_MAX_BYTES),
      }),
      (session, now) => claim(session, cmd, now),
      (value) =>
        value.claims.length === 0
          ? []
          : [
              idsEvent(
                "claim",
                value.claims.map((item) => item.envelope.id),
              ),
            ],
    );
  }

  ack(cmd: { ids: string[] }): Result<{ acked: string[]; unknown: string[] }> {
    return this.decide(
      (core, sql) => ({ ...core, inbox: store.loadForAck(sql, cmd.ids) }),
      (session, now) => ack(session, cmd.ids, now),
      (value) => (value.acked.length === 0 ? [] : [idsEvent("ack", value.acked)]),
    );
  }
}
