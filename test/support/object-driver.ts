// Drives the real session object and the whole-session History model in lockstep: each command goes
// to both, and what a client can observe of each is reduced to the same time-independent shape.
// The object runs on the real clock and the model on its own, so no time value is compared; timers
// are driven by ageing the object's rows (SQL) and advancing the model's clock by the same amount.

import { expect } from "vitest";
import { claim } from "../../src/domain/inbox";
import { finishRun, suspendRun } from "../../src/domain/session";
import { reasonForResult } from "../../src/domain/wake";
import { checkInvariants } from "./history";
import { type Op, waitedHandles } from "./lockstep-commands";
import { LockstepJobs } from "./lockstep-jobs";
import { attempt, cover, failed, type Outcome, outcome, stepOutcome } from "./lockstep-outcomes";

export { AGE_MS, CONFIG, HANDLES, type Op, opArb, type TokenChoice } from "./lockstep-commands";
export { coverage } from "./lockstep-outcomes";

/**
 * One session id, the History model and the real object side by side. `step` applies one command
 * to both and throws (a vitest expectation) at the first difference a client could see.
 */
export class Lockstep extends LockstepJobs {
  static async start(sid: string): Promise<Lockstep> {
    const lockstep = new Lockstep(sid);
    await lockstep.step({ t: "create" });
    return lockstep;
  }

  async step(op: Op): Promise<void> {
    this.trace.push(JSON.stringify(op));
    // The model's clock moves on every command, so its completions are ordered like the object's.
    this.history.now += 1;
    const stepsBefore = this.history.steps.length;
    const resumeBefore = this.history.state?.resume?.resumeId ?? null;
    const ambiguousBefore = this.reasonAmbiguous;
    this.reasonAmbiguous = false;
    const replies = await this.apply(op);
    const where = `step ${this.trace.length} ${this.trace.at(-1)} (session ${this.sid})`;
    const resumeAfter = this.history.state?.resume?.resumeId ?? null;
    // The flag holds for the resume a suspend made, until another one replaces it.
    if (resumeAfter === resumeBefore) this.reasonAmbiguous ||= ambiguousBefore;
    expect(replies.real, `the answer to ${where}`).toEqual(replies.model);
    cover(replies.model.ok ? `ok ${op.t}` : `refused ${op.t} ${replies.model.code}`);

    const model = this.observeModel();
    const real = await this.observeReal();
    expect(real, `what a client observes after ${where}`).toEqual(model);

    for (const handle of this.reused) this.history.admitted.delete(handle);
    for (const step of this.history.steps.slice(stepsBefore)) checkInvariants(this.history, step);
  }

  protected async apply(op: Op): Promise<{ model: Outcome; real: Outcome }> {
    const s = this.history.state;
    const stub = this.stub;
    switch (op.t) {
      case "create": {
        const real = await attempt(() =>
          stub.create({ tenant: "default", id: this.sid, resumeUrl: null, metadata: {} }),
        );
        const step = this.history.run({ t: "create" });
        if (step.ok && step.after !== null && real.ok) {
          this.realLifetimeOf.set(step.after.lifetime, real.value.lifetime);
          this.modelLifetimeOf.set(real.value.lifetime, step.after.lifetime);
          this.realRunId = null;
          this.reused.clear();
          if (this.ended.length > 0) cover("re-created");
        }
        return { model: stepOutcome(step), real: outcome(real) };
      }
      case "delete": {
        const real = await attempt(() => stub.remove());
        const step = this.history.run({ t: "delete" });
        if (step.ok && s !== null) {
          this.ended.push(s.lifetime);
          this.realRunId = null;
          this.reused.clear();
        }
        return { model: stepOutcome(step), real: outcome(real) };
      }
      case "reserve":
        return this.reserve(s, op.h, op.other);
      case "register": {
        const real = await attempt(() => stub.registerRun({ runId: null, resumeId: null }));
        if (s === null) return { model: failed("not_found"), real: outcome(real) };
        const step = this.history.run({ t: "register" });
        if (step.ok && real.ok) this.realRunId = real.value.run_id;
        return {
          model: step.ok ? { ok: true, value: { notify_seq: s.notifySeq } } : stepOutcome(step),
          real: outcome(real, (value) => ({ notify_seq: value.notify_seq })),
        };
      }
      case "finish": {
        const real = await attempt(() => stub.finish({ runId: this.realRunId ?? "run-none" }));
        let model: Outcome;
        if (s === null) model = failed("not_found");
        else if (s.run === null)
          // No active run: the object is asked with the last run id it gave out (or none).
          model = outcome(finishRun(s, { runId: "run-none", resumeId: "-", pending: 0 }, 0));
        else model = stepOutcome(this.history.run({ t: "finish" }));
        if (model.ok) this.realRunId = null;
        return { model, real: outcome(real) };
      }
      case "suspend": {
        const hs = waitedHandles(s, op);
        this.trace[this.trace.length - 1] += ` waiting for ${hs.join(",")}`;
        const real = await attempt(() =>
          stub.suspend({
            runId: this.realRunId ?? "run-none",
            handles: hs,
            wake: op.wake,
            ceilingMs: null,
          }),
        );
        let model: Outcome;
        if (s === null) model = failed("not_found");
        else if (s.run === null)
          model = outcome(
            suspendRun(
              s,
              { runId: "run-none", handles: hs, wake: op.wake, ceilingMs: null, resumeId: "-" },
              this.ctx(),
            ),
          );
        else {
          const reasons = new Set(
            hs.flatMap((h) => {
              const job = s.jobs[h];
              return job?.result ? [reasonForResult(job)] : [];
            }),
          );
          const step = this.history.run({ t: "suspend", hs, wake: op.wake, ceilingMs: null });
          const woke = step.ok && step.after?.resume?.resumeId !== s.resume?.resumeId;
          if (woke) cover("suspend found its results already there");
          if (woke && reasons.size > 1) this.reasonAmbiguous = true;
          model = stepOutcome(step);
        }
        if (model.ok) this.realRunId = null;
        return { model, real: outcome(real) };
      }
      case "complete":
        return this.complete(s, op);
      case "append": {
        const real = await attempt(() =>
          stub.appendMessage({ role: "user", content: op.text, metadata: {} }),
        );
        if (s === null) return { model: failed("not_found"), real: outcome(real) };
        const step = this.history.run({ t: "append", text: op.text });
        return {
          model: step.ok ? { ok: true, value: { index: s.messageCount } } : stepOutcome(step),
          real: outcome(real, (value) => value),
        };
      }
      case "claim": {
        const real = await attempt(() => stub.claim({ max: op.max, leaseMs: op.leaseMs }));
        if (s === null) return { model: failed("not_found"), real: outcome(real) };
        const expected = claim(s, { max: op.max, leaseMs: op.leaseMs }, this.history.now);
        this.history.run({ t: "claim", max: op.max, leaseMs: op.leaseMs });
        if (expected.ok && real.ok) this.pairEnvelopes(expected.value.claims, real.value.claims);
        return {
          model: outcome(expected, (value) => value.claims.map((c) => this.claimShape(c, "model"))),
          real: outcome(real, (value) => value.claims.map((c) => this.claimShape(c, "real"))),
        };
      }
      case "ack":
        return this.ack(s, op);
      case "age":
        await this.age(s);
        return { model: { ok: true }, real: { ok: true } };
      case "restart":
        await this.restart();
        return { model: { ok: true }, real: { ok: true } };
    }
  }
}
