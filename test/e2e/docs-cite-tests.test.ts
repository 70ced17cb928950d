// The docs state each rule beside the test that holds it: `path` "test name". A page that cites a
// test which was renamed, moved or deleted would vouch for a rule nothing checks any more, so every
// citation must name a file that exists and a test it declares.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const PAGES = [
  "README.md",
  ...readdirSync("docs", { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".md"))
    .map((file) => join("docs", file)),
];

/** Whitespace folded: a name may wrap across lines in a page and in a test file. */
const folded = (text: string): string => text.replace(/\s+/g, " ");

interface Citation {
  readonly page: string;
  readonly file: string;
  readonly name: string | null;
}

/** Each cited test file, and each quoted name that follows it (`file` "a", "b"; `file` "c"). */
function citationsIn(page: string, text: string): Citation[] {
  const found: Citation[] = [];
  const flat = folded(text);
  for (const match of flat.matchAll(/`([\w./-]+\.test\.tsx?)`((?:[ ,;]*"[^"]+")*)/g)) {
    const [, file = "", quoted = ""] = match;
    const names = [...quoted.matchAll(/"([^"]+)"/g)].map((name) => name[1] ?? "");
    if (names.length === 0) found.push({ page, file, name: null });
    for (const name of names) found.push({ page, file, name });
  }
  return found;
}

describe("the docs cite tests that exist", () => {
  const citations = PAGES.flatMap((page) => citationsIn(page, readFileSync(page, "utf8")));

  it("reads citations the way the pages write them", () => {
    expect(
      citationsIn("x.md", '*Held by* `a/b.test.ts` "one thing", "another\n  thing"; `c.test.ts`.'),
    ).toEqual([
      { page: "x.md", file: "a/b.test.ts", name: "one thing" },
      { page: "x.md", file: "a/b.test.ts", name: "another thing" },
      { page: "x.md", file: "c.test.ts", name: null },
    ]);
    // The design pages alone cite well over a hundred.
    expect(citations.length).toBeGreaterThan(100);
  });

  it("every cited test file exists and declares every test named beside it", () => {
    const missing = citations.filter(({ file, name }) => {
      if (!existsSync(file)) return true;
      return name !== null && !folded(readFileSync(file, "utf8")).includes(name);
    });
    expect(missing).toEqual([]);
  });
});
