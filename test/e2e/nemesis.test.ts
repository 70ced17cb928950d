// The nemesis run's short variant in `npm test` (the long one is `npm run nemesis`): real
// processes, a misbehaving network, SIGKILLs, a runner that vanishes and one that stalls.
import { describe, expect, it } from "vitest";
import { runToEnd } from "../support/local-stack";
import { NODE_SOURCE_FLAG } from "../support/source-condition";

describe("npm run nemesis -- --quick", () => {
  it("loses no completion, doubles none, declares no live job lost and wakes each session once", async () => {
    const { code, output } = await runToEnd("node_modules/.bin/tsx", [
      // The client and kits as sources, as `npm run` gives them: no built dist/ is needed.
      NODE_SOURCE_FLAG,
      "scripts/nemesis.ts",
      "--quick",
      "--sessions",
      "4",
    ]);
    // One session per runner role: each fault is met.
    for (const fault of ["vanished", "restarted", "stalled", "exec-inbox SIGKILLed"]) {
      expect(output).toContain(fault);
    }
    expect(output).toContain("webhooks received");
    expect(output).toContain(
      "no completion lost or doubled, no live job lost, one resume_id per wake",
    );
    expect(code).toBe(0);
  }, 240_000);
});
