// The runner reads its bodies with the Worker's reader (shared/body.ts): JSON nested past the
// stated limit is a 422 naming it, never a crash of the request.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { depthDetail, MAX_JSON_DEPTH } from "../../shared/json-depth";
import { killAllRunners } from "./runner-process";
import { RUNNER_TOKEN, runnerCall, startRunnerProcess } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-deep-"));
afterAll(async () => {
  await killAllRunners();
  rmSync(root, { recursive: true, force: true });
});

describe("a runner sent deeply nested JSON (real runner process)", () => {
  it("answers 422 with the depth limit, starts nothing, and keeps answering", async () => {
    const runner = await startRunnerProcess(join(root, "deep"));
    const deep = `${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}`;
    const answer = await fetch(`${runner.base}/v1/exec_command`, {
      method: "POST",
      headers: { authorization: `Bearer ${RUNNER_TOKEN}`, "content-type": "application/json" },
      body: `{"cmd":"echo hi","env":${deep}}`,
    });
    expect(answer.status).toBe(422);
    expect(answer.headers.get("content-type")).toContain("application/problem+json");
    expect(await answer.json()).toMatchObject({
      code: "invalid_request",
      detail: depthDetail('{"cmd":"echo hi","env":'.length + 5 * (MAX_JSON_DEPTH - 1)),
    });
    const next = await runnerCall(runner.base, "/v1/exec_command", {
      cmd: "echo still-here",
      yield_time_ms: 2_000,
    });
    expect(next.status).toBe(200);
    expect(JSON.stringify(next.body)).toContain("still-here");
    await runner.stop();
  });
});
