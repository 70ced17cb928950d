import { describe, expect, it } from "vitest";
import { runToEnd } from "../support/local-stack";

describe("npm run crash-test -- --quick", () => {
  it("SIGKILLs wrangler dev mid-load and still loses nothing, doubles nothing, wakes each session once", async () => {
    const { code, output } = await runToEnd("node_modules/.bin/tsx", [
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
