// A rule is handed only the rows its needs name: reading any other row throws, so a rule that
// asks for too few rows fails its tests instead of taking a row it was not given for an absent one.
import { describe, expect, it } from "vitest";
import { at, suspendedOn, T0 } from "../../test/support/domain";
import { loadFor } from "../../test/support/model-rows";
import type { Loaded } from "./decision";
import { tickRule } from "./delivery";
import { completionRule } from "./jobs";
import { fence, UnloadedRowError } from "./records";
import type { Job } from "./state";

const loaded = (session: Loaded["session"]): Loaded => ({
  session,
  overdue: null,
  retainedSince: null,
  pending: () => 0,
});

describe("the rows a rule needs", () => {
  it("a ceiling given the rows its needs name expires the wait; given none of them it throws", () => {
    const state = suspendedOn(["a"]);
    const late = at(T0 + 10 * 60_000);
    const needs = tickRule.needs(state, { resumeId: "rs-2" }, late.now);
    expect(needs.jobs?.handles).toEqual(["a"]);
    const fired = tickRule.decide(
      loaded(loadFor(state, needs, late.now)),
      { resumeId: "rs-2" },
      late,
    );
    expect(fired.ok && fired.state?.wait).toBeNull();
    const starved = { ...state, jobs: fence<Job>({}, []) };
    expect(() => tickRule.decide(loaded(starved), { resumeId: "rs-2" }, late)).toThrow(
      UnloadedRowError,
    );
  });

  it("a completion for another lifetime needs no row at all and is refused on the core", () => {
    const state = suspendedOn(["a"]);
    const cmd = {
      lifetime: "lt-old",
      handle: "a",
      tokenSeq: 1,
      result: {
        status: "completed" as const,
        exitCode: 0,
        output: "",
        outputTruncated: false,
        outputBytesTotal: 0,
        endedBy: "process" as const,
      },
      observed: false,
      resumeId: "rs-2",
    };
    expect(completionRule.needs(state, cmd, T0)).toEqual({});
    const refused = completionRule.decide(loaded(loadFor(state, {}, T0)), cmd, at(T0));
    expect(refused).toMatchObject({ ok: false, code: "lifetime_ended" });
  });
});
