// The real session object, driven in lockstep with the whole-session History model: after every
// command, everything a client can observe of the two must agree (see test/support/object-driver).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { uniqueId } from "../support/api";
import {
  coverage,
  HANDLES,
  Lockstep,
  type Op,
  opArb,
  type TokenChoice,
} from "../support/object-driver";

/** One command of a model run: applied to the model and the object, then compared. */
class Lockstepped implements fc.AsyncCommand<Lockstep, Lockstep> {
  constructor(readonly op: Op) {}
  check(): boolean {
    return true;
  }
  async run(lockstep: Lockstep): Promise<void> {
    await lockstep.step(this.op);
  }
  toString(): string {
    return JSON.stringify(this.op);
  }
}

const start = async () => {
  const lockstep = await Lockstep.start(uniqueId("model"));
  return { model: lockstep, real: lockstep };
};

async function replay(ops: Op[]): Promise<void> {
  const lockstep = await Lockstep.start(uniqueId("scenario"));
  for (const op of ops) await lockstep.step(op);
}

const reserve = (h: string, other = false): Op => ({ t: "reserve", h, other });
/** A completion of `h` (picked among the handles the runner holds tokens of: all of them here). */
const complete = (h: string, variant = 0, token: TokenChoice = "latest"): Op => ({
  t: "complete",
  pick: HANDLES.indexOf(h as (typeof HANDLES)[number]),
  variant,
  token,
});
const claimAll: Op = { t: "claim", max: 3, leaseMs: 300_000 };
const ackClaimed: Op = { t: "ack", n: 2, again: true, unknown: true };
const age: Op = { t: "age" };

/** Situations the random histories must reach, or the property proves less than it claims. */
const MUST_COVER = [
  "accepted active_run_notified",
  "accepted observed",
  "accepted queued",
  "accepted resume_scheduled",
  "accepted staged",
  "ack of an unknown id",
  "acked",
  "handle reserved again after its purge",
  "duplicate",
  "re-created",
  "refused complete lifetime_ended",
  "refused complete result_conflict",
  "refused complete job_expired",
  "refused register run_conflict",
  "refused reserve job_conflict",
  "refused suspend not_found",
  "retention purged",
  "same reservation again",
  "suspend found its results already there",
  "wait ceiling passed",
];

describe("the session object against the whole-session model", () => {
  it("agrees with the model on everything a client can observe, after every command of a random history", async () => {
    coverage.clear();
    await fc.assert(
      fc.asyncProperty(
        fc.commands([opArb.map((op) => new Lockstepped(op))], { maxCommands: 40, size: "max" }),
        (commands) => fc.asyncModelRun(start, commands),
      ),
      // A failure's shrinking replays whole histories: it stops after the limit with what it has.
      { numRuns: 80, seed: 20260701, plugins: [fc.interruptAfterTimeLimit(100_000)] },
    );
    const missing = MUST_COVER.filter((what) => !coverage.has(what));
    expect(missing, JSON.stringify(Object.fromEntries(coverage))).toEqual([]);
  }, 150_000);

  const scenarios: Record<string, Op[]> = {
    "a handle reserved again after its purge is a new job, and the old envelope still waits unacked":
      [
        reserve("a"),
        complete("a"),
        age,
        complete("a"),
        reserve("a"),
        age,
        reserve("a"),
        complete("a", 0, "first"),
        complete("a"),
        complete("a", 1),
        claimAll,
        ackClaimed,
        age,
        age,
      ],
    "a handle reserved again after its purge is a new job, its old envelope acked and purged": [
      reserve("a"),
      complete("a", 2),
      claimAll,
      ackClaimed,
      age,
      age,
      reserve("a"),
      complete("a", 2),
      complete("a", 2, "first"),
      claimAll,
    ],
    "a wait for all handles stages the first result and its ceiling wakes for the rest": [
      reserve("a"),
      reserve("b"),
      { t: "register" },
      { t: "suspend", picks: [0, 1], wake: "all", stray: false },
      complete("a", 3),
      age,
      claimAll,
      { t: "register" },
      complete("b", 1),
      { t: "finish" },
      claimAll,
      ackClaimed,
      { t: "restart" },
      age,
    ],
    "a token of a deleted lifetime is refused, also after the id was created again": [
      reserve("a"),
      { t: "delete" },
      complete("a", 0, "ended"),
      { t: "create" },
      complete("a", 0, "ended"),
      reserve("a"),
      reserve("a", true),
      complete("a", 0, "ended"),
      complete("a"),
      complete("a"),
    ],
  };
  for (const [name, ops] of Object.entries(scenarios)) {
    it(name, () => replay(ops), 30_000);
  }
});
