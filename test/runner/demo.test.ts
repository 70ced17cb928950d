import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("npm run demo", () => {
  it("runs the whole loop on this machine and exits 0 with a timeline", async () => {
    const child = spawn("npm", ["run", "--silent", "demo"], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(output).toMatch(
      /\[\+\s*\d+ ms\] signed resume webhook received and verified — resume_id=rs_\w+ reason=background_exec_completed/,
    );
    expect(output).toMatch(/write_stdin pull from the runner — exit_code=7 output="inbox-result"/);
    expect(output).toContain("demo passed");
    expect(code).toBe(0);
  }, 90_000);
});
