import { describe, expect, it } from "vitest";
import { runToEnd } from "../support/local-stack";
import { NODE_SOURCE_FLAG } from "../support/source-condition";

describe("npm run crash-test -- --quick", () => {
  it("SIGKILLs wrangler dev mid-load and still loses nothing, doubles nothing, wakes each session once", async () => {
    const { code, output } = await runToEnd("node_modules/.bin/tsx", [
      // The client and kits as sources, as `npm run` gives them: no built dist/ is needed.
      NODE_SOURCE_FLAG,
      "scripts/crash-test.ts",
      "--quick",
      "--kills",
      "3",
    ]);
    const figures = JSON.parse(output.split("\n").find((line) => line.startsWith("{")) ?? "{}");
    expect(figures).toMatchObject({ lost: 0, doubled: 0, stale_admitted: 0 });
    expect(figures.kills).toBeGreaterThanOrEqual(1);
    expect(figures.acknowledged).toBe(figures.operations);
    expect(figures.woken_sessions).toBe(figures.sessions);
    expect(code).toBe(0);
  }, 150_000);
});
