// The dispatch of `npm run bench -- [NAME] [ARGS…]`: a name runs its benchmark with the rest of the
// arguments, options alone are the main run's, and an unknown name is refused.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BENCHMARKS, entryOf, usage } from "./main";

describe("npm run bench -- NAME", () => {
  it("runs the main comparison with no name, and with options alone", () => {
    expect(entryOf([])).toEqual({ file: "bench.ts", args: [] });
    expect(entryOf(["--quick"])).toEqual({ file: "bench.ts", args: ["--quick"] });
  });

  it("runs a named benchmark with the arguments after its name", () => {
    expect(entryOf(["objects", "--quick"])).toEqual({
      file: "bench-objects.ts",
      args: ["--quick"],
    });
    expect(entryOf(["ab", "a.js", "b.js", "40"])).toEqual({
      file: "bench-ab.ts",
      args: ["a.js", "b.js", "40"],
    });
  });

  it("refuses a name that is no benchmark, and lists every name it knows", () => {
    expect(entryOf(["bench:rows"])).toBeNull();
    expect(entryOf(["toString"])).toBeNull();
    for (const name of Object.keys(BENCHMARKS)) expect(usage()).toContain(`-- ${name} `);
  });

  it("names an entry file that exists for every benchmark", () => {
    for (const [file] of Object.values(BENCHMARKS)) {
      expect(existsSync(new URL(file, import.meta.url))).toBe(true);
    }
  });
});
