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

  it("npm run demo -- --kit agents-sdk runs the loop with the Agents SDK kit's agent, woken by a binding", async () => {
    const { code, output } = await runToEnd("npm", [
      "run",
      "--silent",
      "demo",
      "--",
      "--kit",
      "agents-sdk",
    ]);
    expect(output).toContain("the runtime message is in");
    expect(output).toMatch(/exited with code 7: inbox-result/);
    // Beside the timeline, the texts the agent's model read, its runtime message first-line first.
    expect(output).toMatch(
      /│ model read: user: \[runtime\] Background command session_id="\w+": exited with code 7\.\n/,
    );
    expect(output).toContain("agents-sdk demo passed");
    expect(code).toBe(0);
  }, 120_000);

  it("npm run demo -- --mcp runs the loop through the session's MCP endpoint with the MCP SDK's client", async () => {
    const { code, output } = await runToEnd("npm", ["run", "--silent", "demo", "--", "--mcp"]);
    expect(output).toMatch(
      /exec_command over MCP: in the background, job reserved and armed — session_id=\S+ will_wake=true/,
    );
    expect(output).toContain(
      'write_stdin over MCP, from the stored result — "exited with code 7\\ninbox-result"',
    );
    expect(output).toContain("mcp demo passed");
    expect(code).toBe(0);
  }, 120_000);
});
