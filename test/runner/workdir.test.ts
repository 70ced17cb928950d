// A command's `workdir` stays inside its workspace (real runner process, sandboxed by default): a
// path out of it — absolute, `..`, or a symlink that points out — is 422 and starts nothing.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killAllRunners } from "./runner-process";
import { runnerCall, startRunnerProcess } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-workdir-"));
// The sandbox's user (nobody, where the runner is root) passes through it to its workspace.
chmodSync(root, 0o711);
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
    for (const workdir of ["/", "/etc", "..", "../s2", "sub/../../s2"]) {
      const answer = await runnerCall(runner.base, "/v1/exec_command", {
        cmd: "touch escaped",
        workspace: "s1",
        workdir,
        yield_time_ms: 2_000,
      });
      expect([workdir, answer.status, answer.body.code]).toEqual([workdir, 422, "invalid_request"]);
      expect(answer.body.detail).toContain("outside the command's workspace");
    }
    // A symlink out is followed only inside the sandbox, which refuses to run there: the runner,
    // as root, following it would tell the command which host paths exist.
    for (const workdir of ["out", "out/etc", "out/root/no-such-dir"]) {
      const answer = await runnerCall(runner.base, "/v1/exec_command", {
        cmd: "touch escaped",
        workspace: "s1",
        workdir,
        yield_time_ms: 5_000,
      });
      expect([workdir, answer.status, answer.body.exit_code]).toEqual([workdir, 200, 125]);
      expect(answer.body.output).toContain(
        "outside the command's workspace: the command did not run",
      );
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

  it("a workdir swapped for a symlink out of the workspace after the runner's check runs nothing outside it", async () => {
    const runner = await startRunnerProcess(join(root, "race-state"), {
      env: { RUNNER_WORK_ROOT: join(root, "race-work") },
    });
    const made = await runnerCall(runner.base, "/v1/exec_command", {
      cmd: "mkdir -p real && ln -sfn real flip && pwd",
      workspace: "racer",
      yield_time_ms: 10_000,
    });
    const workspace = String(made.body.output).trim();
    expect(workspace).toMatch(/\/racer$/);
    // `flip` points in turn at a directory of the workspace and at /, each swap one atomic rename.
    const flipper = await runnerCall(runner.base, "/v1/exec_command", {
      cmd: `exec perl -e 'while (1) { symlink("/", "a"); rename("a", "flip"); symlink("real", "b"); rename("b", "flip") }'`,
      workspace: "racer",
      yield_time_ms: 300,
    });
    expect(flipper.body.session_id).toBeDefined();
    // Each pwd is pulled until it has exited: on a busy machine one may outlast its yield, and
    // its empty output so far says nothing about where it ran.
    const finished = async (answer: Awaited<ReturnType<typeof runnerCall>>) => {
      let last = answer;
      let output = String(answer.body.output ?? "");
      while (last.status === 200 && last.body.exit_code === undefined) {
        last = await runnerCall(runner.base, "/v1/write_stdin", {
          session_id: answer.body.session_id,
          yield_time_ms: 5_000,
        });
        output += String(last.body.output ?? "");
      }
      return { ...last, body: { ...last.body, output } };
    };
    // 80 tries in waves of 20: all at once, a busy machine keeps more of them alive than the
    // runner's 64 live processes, and the rest are refused 429 before the race is even run.
    const outcomes: Awaited<ReturnType<typeof finished>>[] = [];
    for (let wave = 0; wave < 4; wave += 1) {
      const tries = Array.from({ length: 20 }, async () =>
        finished(
          await runnerCall(runner.base, "/v1/exec_command", {
            cmd: "pwd -P",
            workspace: "racer",
            workdir: "flip",
            yield_time_ms: 5_000,
          }),
        ),
      );
      outcomes.push(...(await Promise.all(tries)));
    }
    await runnerCall(runner.base, `/v1/processes/${flipper.body.session_id}/kill`, {});
    await runner.stop();
    const seen = outcomes.map((answer) => {
      if (answer.status === 422) return "refused";
      if (answer.status !== 200) return `answered ${answer.status}: ${JSON.stringify(answer.body)}`;
      const output = String(answer.body.output);
      if (answer.body.exit_code === 125 && output.includes("outside the command's workspace")) {
        return "refused in the sandbox";
      }
      return output.trim() === `${workspace}/real` ? "inside" : `outside: ${output.trim()}`;
    });
    expect(seen.filter((outcome) => outcome.startsWith("outside"))).toEqual([]);
    expect(seen.filter((outcome) => outcome.startsWith("answered"))).toEqual([]);
    // The race was run: both sides of the swap were met.
    expect(seen).toContain("inside");
    expect(seen.some((outcome) => outcome !== "inside")).toBe(true);
  });
});
