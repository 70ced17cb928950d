import { describe, expect, it } from "vitest";
import { deadline, relativeIso, relativeTime, statusTone } from "./format";

const T0 = 1_700_000_000_000;

describe("the console's wording of times and statuses", () => {
  it("says how long ago or how far ahead, in whole units rounded down", () => {
    expect(relativeTime(T0 - 400, T0)).toBe("just now");
    expect(relativeTime(T0 - 42_900, T0)).toBe("42 s ago");
    expect(relativeTime(T0 - 3 * 60_000 - 59_000, T0)).toBe("3 min ago");
    expect(relativeTime(T0 + 2 * 3_600_000 + 1, T0)).toBe("in 2 h");
    expect(relativeTime(T0 - 3 * 86_400_000, T0)).toBe("3 d ago");
  });

  it("words a deadline ahead as a countdown and a passed one as overdue", () => {
    expect(deadline(new Date(T0 + 5 * 3_600_000).toISOString(), T0)).toBe("in 5 h");
    expect(deadline(new Date(T0 - 3 * 60_000).toISOString(), T0)).toBe("overdue by 3 min");
    expect(deadline(null, T0)).toBe("—");
    expect(relativeIso(undefined, T0)).toBe("—");
  });

  it("colours what needs a hand red, what waits amber, what moves blue", () => {
    expect((["failed", "no_target", "overdue", "lost"] as const).map(statusTone)).toEqual([
      "red",
      "red",
      "red",
      "red",
    ]);
    expect([statusTone("suspended"), statusTone("resuming"), statusTone("completed")]).toEqual([
      "amber",
      "blue",
      "green",
    ]);
  });
});
