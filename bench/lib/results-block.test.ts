// The current results in docs/benchmarks.md: the bench replaces what lies between the two markers
// and nothing else, and writes nothing to a page without them.
import { describe, expect, it } from "vitest";
import { RESULTS_END, RESULTS_START, withResults } from "./results-block";

const page = (results: string) =>
  `# Benchmarks\n\nThe method.\n\n${RESULTS_START}\n${results}\n${RESULTS_END}\n\nMore method.\n`;

describe("the results block of docs/benchmarks.md", () => {
  it("replaces what lies between the markers and keeps the rest of the page as it was", () => {
    expect(withResults(page("| old | table |"), "| new | table |")).toBe(page("| new | table |"));
  });

  it("replaces the last run's results instead of adding to them", () => {
    const once = withResults(page(""), "run 1");
    expect(once).not.toBeNull();
    expect(withResults(once ?? "", "run 2")).toBe(page("run 2"));
  });

  it("writes nothing to a page without both markers in order", () => {
    expect(withResults("# Benchmarks\n\nNo markers.\n", "run")).toBeNull();
    expect(withResults(`${RESULTS_START}\nonly the start\n`, "run")).toBeNull();
    expect(withResults(`${RESULTS_END}\nreversed\n${RESULTS_START}\n`, "run")).toBeNull();
  });

  it("writes nothing where a marker appears twice, rather than guess which block is current", () => {
    expect(withResults(page("a") + page("b"), "run")).toBeNull();
  });

  it("keeps the page's own text when the new results hold a `$` pattern", () => {
    expect(withResults(page("old"), "$& $1 $$ costs $0.30")).toBe(page("$& $1 $$ costs $0.30"));
  });
});
