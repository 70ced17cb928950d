// A command's `workdir` stays inside its workspace (real runner process, sandboxed by default): a
// path out of it — absolute, `..`, or a symlink that points out — is 422 and starts nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killAllRunners } from "./runner-process";
import { runnerCall, startRunnerProcess } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-workdir-"));
afterAll(async () => {
  await killAllRunners();
  rmSync(root, { recursive: true, force: true });
});

describe("a command's workdir (real runner process)", () => {
  it("outside its workspace is 422 invalid_request, starts nothing; inside it the command runs there", async () => {
    const runner = await startRunnerProcess(join(root, "state"), {
      env: { RUNNER_WORK_ROOT: join(root, "work") },
    });
    const first = await runnerCall(runner.base, "/v1/exec_command", {
      cmd: "mkdir -p sub && ln -s / out && pwd",
      workspace: "s1",
      yield_time_ms: 5_000,
    });
    expect(first.status).toBe(200);
    const workspace = String(first.body.output).trim();
    for (const workdir of ["/", "/etc", "..", "../s2", "sub/../../s2", "out", "out/etc"]) {
      const answer = await runnerCall(runner.base, "/v1/exec_command", {
        cmd: "touch escaped",
        workspace: "s1",
        workdir,
        yield_time_ms: 2_000,
      });
      expect([workdir, answer.status, answer.body.code]).toEqual([workdir, 422, "invalid_request"]);
      expect(answer.body.detail).toContain("outside the command's workspace");
    }
    const inside = await runnerCall(runner.base, "/v1/exec_command", {
      cmd: "pwd",
      workspace: "s1",
      workdir: "sub",
      yield_time_ms: 5_000,
    });
    expect(inside.status).toBe(200);
    expect(String(inside.body.output).trim()).toBe(`${workspace}/sub`);
    // Nothing ran for the refused ones: no `escaped` anywhere the workspace can see.
    const look = await runnerCall(runner.base, "/v1/exec_command", {
      cmd: "ls -a; ls sub",
      workspace: "s1",
      yield_time_ms: 5_000,
    });
    expect(String(look.body.output)).not.toContain("escaped");
    await runner.stop();
  });
});
