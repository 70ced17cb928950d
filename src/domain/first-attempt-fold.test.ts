// A folded first attempt that cannot be made ends the resume the way the
// timers would, in the same decision, with no POST.
import { describe, expect, it } from "vitest";
import { at, completed, ok, pendingItems, suspendedOn, T0 } from "../../test/support/domain";
import { tick, withDueAttempt } from "./delivery";
import { completeJob } from "./jobs";

const wake = (state = suspendedOn(["a"])) =>
  completeJob(
    state,
    {
      lifetime: state.lifetime,
      handle: "a",
      tokenSeq: null,
      result: completed(0, "x"),
      observed: false,
      resumeId: "rs-1",
    },
    at(T0),
  );

describe("a folded first attempt that cannot be made", () => {
  it("an origin withdrawn from the allowlist fails the resume with the timers' error, and posts nothing", () => {
    const before = suspendedOn(["a"]);
    const config = { resumeUrlAllowlist: ["http://127.0.0.1:*"] };
    const folded = ok(withDueAttempt(before, wake(before), () => 0, at(T0, config)));
    const state = ok(wake(before)).state;
    const byTimers = ok(
      tick(
        state,
        { resumeId: "x", pending: pendingItems(state, T0), retainedSince: null },
        at(T0, config),
      ),
    );
    expect(folded.effects).toEqual([]);
    expect(folded.state).toEqual(byTimers.state);
    expect(folded.state.resume).toMatchObject({ state: "failed" });
    expect(folded.state.resume?.lastError).toContain("no longer in RESUME_URL_ALLOWLIST");
  });

  it("a resume out of attempts is failed, not posted", () => {
    const before = suspendedOn(["a"]);
    const folded = ok(
      withDueAttempt(before, wake(before), () => 0, at(T0, { resumeMaxAttempts: 0 })),
    );
    expect(folded.effects).toEqual([]);
    expect(folded.state.resume).toMatchObject({ state: "failed", attempts: 0 });
  });
});
