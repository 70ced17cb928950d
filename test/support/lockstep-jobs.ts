// The lockstep's job and inbox commands — reservations, completions, acks — and ageing, each
// applied to the model and to the object. Dispatching the random commands is left to the Lockstep.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { nextDueAt, oldestRetained, tick } from "../../src/domain/delivery";
import { ack } from "../../src/domain/inbox";
import { completeJob, reserveJob } from "../../src/domain/jobs";
import type { Session } from "../../src/domain/state";
import { jobView } from "../../src/domain/view";
import { hasSchema } from "../../src/session-object/migrations";
import * as retention from "../../src/session-object/store/retention";
import { loadCore } from "../../src/session-object/store/session-row";
import { complete as postCompletion } from "./api";
import { inboxCounts } from "./domain";
import { AGE_MS, CONFIG, HANDLES, type Op, type TokenChoice, VARIANTS } from "./lockstep-commands";
import { LockstepObserver } from "./lockstep-observer";
import {
  attempt,
  cover,
  failed,
  type Outcome,
  outcome,
  stepOutcome,
  type Token,
} from "./lockstep-outcomes";
import { inObject, shiftTimes } from "./lockstep-storage";

export abstract class LockstepJobs extends LockstepObserver {
  protected async reserve(
    s: Session | null,
    h: string,
    other: boolean,
  ): Promise<{ model: Outcome; real: Outcome }> {
    const command = `${other ? "other" : "run"} ${h}`;
    const real = await attempt(() => this.stub.reserveJob({ handle: h, command }));
    const realOutcome = outcome(real, (value) => ({
      created: value.created,
      job: this.jobShape(value.job, "real"),
    }));
    if (s === null) return { model: failed("not_found"), real: realOutcome };
    const fresh = s.jobs[h] === undefined;
    const step = other
      ? this.applyModel(
          { t: "reserve", h },
          reserveJob(s, { handle: h, command, callbackToken: "t" }, this.history.now),
        )
      : this.history.run({ t: "reserve", h });
    const job = step.after?.jobs[h];
    if (step.ok && job !== undefined && real.ok) {
      const key = `${s.lifetime}\n${h}`;
      const held = this.tokens.get(key) ?? [];
      if (fresh) {
        if (held.length > 0) {
          this.reused.add(h);
          cover("handle reserved again after its purge");
        }
        this.tokens.set(key, [...held, { seq: job.seq, token: real.value.token }]);
      } else {
        cover("same reservation again");
        // Same handle and command again: the identical callback token (one reservation).
        expect(real.value.token, `the token of a repeated reservation of ${h}`).toBe(
          held.at(-1)?.token,
        );
      }
    }
    return {
      model:
        step.ok && job
          ? { ok: true, value: { created: fresh, job: this.jobShape(jobView(job), "model") } }
          : stepOutcome(step),
      real: realOutcome,
    };
  }

  /** The runner's token for a completion: which handle (by pick, among those it holds) and which one. */
  protected tokenFor(
    pick: number,
    choice: TokenChoice,
  ): { lifetime: string; h: string; token: Token } | null {
    // Without a lifetime that ended, an `ended` choice falls back to the current lifetime's token.
    const lifetimes: (string | null)[] = choice === "ended" ? [...this.ended].reverse() : [];
    lifetimes.push(this.lifetime);
    for (const lifetime of lifetimes) {
      if (lifetime === null) continue;
      const held = HANDLES.filter((h) => this.tokens.has(`${lifetime}\n${h}`));
      const h = held[pick % Math.max(1, held.length)];
      const tokens = h === undefined ? [] : (this.tokens.get(`${lifetime}\n${h}`) ?? []);
      const token = choice === "first" ? tokens[0] : tokens.at(-1);
      if (h !== undefined && token !== undefined) return { lifetime, h, token };
    }
    return null;
  }

  protected async complete(
    s: Session | null,
    op: Extract<Op, { t: "complete" }>,
  ): Promise<{ model: Outcome; real: Outcome }> {
    const chosen = this.tokenFor(op.pick, op.token);
    // A runner without a token of this handle cannot call at all.
    if (chosen === null) {
      cover("complete without a token");
      return { model: { ok: true }, real: { ok: true } };
    }
    const h = chosen.h;
    this.trace[this.trace.length - 1] +=
      ` for ${h} with token seq ${chosen.token.seq} of ${chosen.lifetime}`;
    const { result, observed } = VARIANTS[op.variant] ?? VARIANTS[0]!;
    const answer = await postCompletion(this.sid, h, chosen.token.token, {
      status: result.status,
      exit_code: result.exitCode,
      output: result.output,
      output_truncated: result.outputTruncated,
      output_bytes_total: result.outputBytesTotal,
      ended_by: result.endedBy,
      observed,
    });
    const real: Outcome =
      answer.status === 202 || answer.status === 200
        ? { ok: true, value: { status: answer.status, ...answer.body } }
        : failed(answer.body?.code ?? `status ${answer.status}`);
    const decision = completeJob(
      s,
      {
        lifetime: chosen.lifetime,
        handle: h,
        tokenSeq: chosen.token.seq,
        result,
        observed,
        resumeId: this.id("rs"),
      },
      this.ctx(),
    );
    this.applyModel(
      { t: "complete", h, variant: op.variant, stale: chosen.lifetime !== s?.lifetime },
      decision,
    );
    if (decision.ok) {
      const reply = decision.value;
      cover(reply.outcome === "accepted" ? `accepted ${reply.disposition}` : reply.outcome);
      if (reply.outcome === "accepted" && reply.disposition !== "observed")
        this.history.admitted.add(h);
    }
    const model = outcome(decision, (value) => ({
      status: value.outcome === "accepted" ? 202 : 200,
      ...value,
    }));
    return { model, real };
  }

  protected async ack(
    s: Session | null,
    op: Extract<Op, { t: "ack" }>,
  ): Promise<{ model: Outcome; real: Outcome }> {
    const items = Object.values(s?.inbox ?? {}).sort(
      (a, b) => a.envelope.generation - b.envelope.generation,
    );
    const ids = [
      ...items
        .filter((item) => item.state === "claimed")
        .slice(0, op.n)
        .map((item) => item.envelope.id),
      ...(op.again ? items.filter((item) => item.state === "acked").slice(0, 1) : []).map(
        (item) => item.envelope.id,
      ),
    ];
    if (op.unknown || ids.length === 0) ids.push("env_unknown");
    const realIds = ids.map((id) => this.realEnvelopeOf.get(id) ?? id);
    const real = await attempt(() => this.stub.ack({ ids: realIds }));
    const realOutcome = outcome(real, (value) => ({
      acked: value.acked.map((id) => this.modelEnvelopeOf.get(id) ?? `real ${id}`),
      unknown: value.unknown.map((id) => this.modelEnvelopeOf.get(id) ?? id),
    }));
    if (s === null) return { model: failed("not_found"), real: realOutcome };
    const decision = ack(s, ids, this.history.now);
    this.applyModel({ t: "ack", n: op.n }, decision);
    if (decision.ok) {
      for (const id of decision.value.acked) {
        const item = s.inbox[id];
        if (item !== undefined) this.history.acked.add(item.envelope.correlation_id);
        cover(item?.state === "acked" ? "acked again" : "acked");
      }
      if (decision.value.unknown.length > 0) cover("ack of an unknown id");
    }
    return { model: outcome(decision, (value) => value), real: realOutcome };
  }

  /**
   * Moves both clocks past every timer: the model's by AGE_MS, the object's by shifting every
   * stored time back by AGE_MS and restarting it (its caches reload from storage), then running
   * its alarm until nothing is due.
   */
  protected async age(s: Session | null): Promise<void> {
    this.history.now += AGE_MS;
    for (let round = 0; round < 8; round += 1) {
      const state = this.history.state;
      if (state === null) break;
      const retainedSince = oldestRetained(state);
      const due = nextDueAt(state, retainedSince, this.ctx());
      if (due === null || due > this.history.now) break;
      const pending = inboxCounts(state, this.history.now).pending;
      const decision = tick(state, { resumeId: this.id("rs"), pending, retainedSince }, this.ctx());
      this.applyModel({ t: "tick" }, decision);
      if (decision.ok && decision.value.purgeBefore !== null) cover("retention purged");
    }
    if (s !== null && s.wait !== null) cover("wait ceiling passed");

    await runInDurableObject(this.rawStub, (_, state) => {
      const sql = state.storage.sql;
      if (!hasSchema(sql)) return;
      state.storage.transactionSync(() => shiftTimes(sql, AGE_MS));
    });
    await this.restart();
    await runDurableObjectAlarm(this.rawStub);
    // Whatever the alarm left due (it fires on its own too, so it may have run already) runs now.
    const stillDue = await inObject(this.rawStub, async (instance, state) => {
      for (let round = 0; round < 4; round += 1) {
        const sql = state.storage.sql;
        const core = hasSchema(sql) ? loadCore(sql) : null;
        if (core === null) return null;
        const due = nextDueAt(core, retention.oldestRetained(sql), { config: CONFIG });
        if (due === null || due > Date.now()) return null;
        await instance.alarm();
      }
      return "timers still due after four alarms";
    });
    expect(stillDue).toBeNull();
  }
}
