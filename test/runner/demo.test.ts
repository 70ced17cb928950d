import { describe, expect, it } from "vitest";
import { runToEnd } from "../support/local-stack";

describe("npm run demo", () => {
  it("runs the whole loop on this machine and exits 0 with a timeline", async () => {
    const { code, output } = await runToEnd("npm", ["run", "--silent", "demo"]);
    expect(output).toMatch(
      /\[\+\s*\d+ ms\] signed resume webhook received and verified — resume_id=rs_\w+ reason=background_exec_completed/,
    );
    expect(output).toMatch(/write_stdin pull from the runner — exit_code=7 output="inbox-result"/);
    expect(output).toContain("demo passed");
    expect(code).toBe(0);
  }, 90_000);

  it("runs the loop with each kit's agent: the Agents SDK one woken by a binding, the OpenAI Agents JS one by the webhook", async () => {
    for (const [mode, passed] of [
      ["--agents-sdk", "agents-sdk demo passed"],
      ["--openai-agents", "openai-agents demo passed"],
    ] as const) {
      const { code, output } = await runToEnd("npm", ["run", "--silent", "demo", "--", mode]);
      expect(output).toContain("the runtime message is in");
      expect(output).toMatch(/exited with code 7: inbox-result/);
      expect([mode, output.includes(passed), code]).toEqual([mode, true, 0]);
    }
  }, 180_000);
});
