import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";
import { type Command, checkInvariants, commandArb, History } from "../../test/support/history";

function replay(commands: Command[]): History {
  const history = new History();
  for (const command of commands) checkInvariants(history, history.run(command));
  return history;
}

describe("the domain under random histories", () => {
  it("keeps every promise after every step of thousands of random histories", () => {
    fc.assert(
      fc.property(
        fc.array(commandArb, { minLength: 1, maxLength: 80, size: "max" }),
        (commands) => {
          // Most histories start from a session; delete and create inside them cover re-creation.
          replay([{ t: "create" }, ...commands]);
        },
      ),
      { numRuns: inject("propertyRuns"), seed: 20261130 },
    );
    // 10,000 histories are CPU-bound: seconds on a quiet machine, more beside other test files.
  }, 120_000);

  it("histories that start with no session hold too", () => {
    fc.assert(
      fc.property(fc.array(commandArb, { minLength: 1, maxLength: 30 }), (commands) => {
        replay(commands);
      }),
      { numRuns: 500 },
    );
  });

  it("histories that start with a session and a wait hold too (denser wake paths)", () => {
    const prefix: Command[] = [
      { t: "create" },
      { t: "reserve", h: "a" },
      { t: "reserve", h: "b" },
      { t: "register" },
      { t: "suspend", hs: ["a", "b"], wake: "all", ceilingMs: 5000 },
    ];
    fc.assert(
      fc.property(
        fc.array(commandArb, { minLength: 1, maxLength: 50, size: "max" }),
        (commands) => {
          replay([...prefix, ...commands]);
        },
      ),
      { numRuns: 2000 },
    );
  });

  // Shrunk from a failing run (the model had wrongly treated a refused create as ending the lifetime).
  it("a create refused with session_exists leaves the lifetime current: its completions are still accepted", () => {
    const history = replay([{ t: "create" }, { t: "create" }, { t: "reserve", h: "b" }]);
    const lifetime = history.state?.lifetime;
    const step = history.run({ t: "complete", h: "b", variant: 0, stale: false });
    expect(step.ok).toBe(true);
    expect(history.state?.lifetime).toBe(lifetime);
    expect(history.steps[1]).toMatchObject({ ok: false, code: "session_exists" });
  });

  it("a timer fired twice at the same moment does nothing the second time", () => {
    const history = replay([
      { t: "create" },
      { t: "reserve", h: "a" },
      { t: "register" },
      { t: "suspend", hs: ["a"], wake: "all", ceilingMs: 1000 },
      { t: "advance", ms: 1000 },
      { t: "tick" },
    ]);
    const once = history.state;
    history.run({ t: "tick" });
    expect(history.state).toBe(once);
  });
});
