// The current results in docs/benchmarks.md: the block between two markers that `npm run bench`
// rewrites after each run. The page around it (the method) is written by hand and left alone.
import { existsSync, readFileSync, writeFileSync } from "node:fs";

export const RESULTS_START = "<!-- bench:results:start -->";
export const RESULTS_END = "<!-- bench:results:end -->";

const once = (page: string, marker: string) => {
  const at = page.indexOf(marker);
  return at >= 0 && page.indexOf(marker, at + 1) < 0 ? at : -1;
};

/**
 * `page` with what lies between the markers replaced by `results`, or null when the page does not
 * hold each marker exactly once, start before end: then no block is known to be the current one.
 */
export function withResults(page: string, results: string): string | null {
  const start = once(page, RESULTS_START);
  const end = once(page, RESULTS_END);
  if (start < 0 || end < start) return null;
  return `${page.slice(0, start + RESULTS_START.length)}\n${results}\n${page.slice(end)}`;
}

/** Writes `results` into the page at `path`; says so and writes nothing when it has no block. */
export function writeResults(path: string, results: string): boolean {
  const page = existsSync(path) ? readFileSync(path, "utf8") : null;
  const next = page === null ? null : withResults(page, results);
  if (next === null) {
    console.error(
      `${path} ${page === null ? "does not exist" : `has no ${RESULTS_START} … ${RESULTS_END} block`}: the results above were not written there.`,
    );
    return false;
  }
  writeFileSync(path, next);
  console.log(`The results are written into ${path}.`);
  return true;
}
