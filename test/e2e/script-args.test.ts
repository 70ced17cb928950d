import { describe, expect, it } from "vitest";
import { scriptArgs } from "../../scripts/lib/args";

const parsed = (...argv: string[]) => scriptArgs(["completions"], argv);

describe("the scripts' argument parser", () => {
  it("reads a whole positive number and falls back when the option is absent", () => {
    expect(parsed("--completions", "200").number("completions", 7)).toBe(200);
    expect(parsed().number("completions", 7)).toBe(7);
    expect(parsed("--quick").quick).toBe(true);
  });

  it.each(["0", "-5", "2.5", "", " ", "ten", "Infinity", "1e300"])(
    "refuses %j instead of running with it",
    (value) => {
      expect(() => parsed(`--completions=${value}`).number("completions", 7)).toThrow(
        /--completions must be a whole number of at least 1/,
      );
    },
  );

  it("refuses an option it does not know, and a negative value written apart as an option", () => {
    expect(() => parsed("--completion", "5")).toThrow(/Unknown option '--completion'/);
    expect(() => parsed("--completions", "-5")).toThrow(/--completions/);
  });
});
