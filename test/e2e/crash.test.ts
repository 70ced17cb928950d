import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("npm run crash-test -- --quick", () => {
  it("SIGKILLs wrangler dev mid-load and still loses nothing, doubles nothing, wakes each session once", async () => {
    const child = spawn(
      "node_modules/.bin/tsx",
      ["scripts/crash-test.ts", "--quick", "--kills", "3"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    const figures = JSON.parse(output.split("\n").find((line) => line.startsWith("{")) ?? "{}");
    expect(figures).toMatchObject({ lost: 0, doubled: 0, stale_admitted: 0 });
    expect(figures.kills).toBeGreaterThanOrEqual(1);
    expect(figures.acknowledged).toBe(figures.operations);
    expect(figures.woken_sessions).toBe(figures.sessions);
    expect(code).toBe(0);
  }, 150_000);
});
