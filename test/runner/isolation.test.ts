import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT_WORK_ROOT } from "../../runner/src/sandbox-settings";
import { DEV_RUNNER_TOKEN } from "../../runner/src/settings";
import { killAllRunners, runnerRefusal } from "./runner-process";
import { RUNNER_TOKEN, runnerCall, startRunnerProcess } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-isolation-"));
afterAll(async () => {
  await killAllRunners();
  rmSync(root, { recursive: true, force: true });
});

const run = async (base: string, cmd: string) =>
  (await runnerCall(base, "/v1/exec_command", { cmd, yield_time_ms: 10_000 })).body;

describe("what a command can see of the runner (real processes)", () => {
  it("a command's environment holds no RUNNER_* setting and no token, only the allow-list and the opt-ins", async () => {
    const runner = await startRunnerProcess(join(root, "env-state"), {
      env: {
        RUNNER_CHILD_ENV: "PASSED_ON",
        PASSED_ON: "yes",
        CLOUD_API_KEY: "must-not-leak",
        LC_ALL: "C",
      },
    });
    const answer = await run(runner.base, "env");
    await runner.stop();
    expect(answer.exit_code).toBe(0);
    const names = (answer.output as string)
      .split("\n")
      .filter(Boolean)
      .map((line) => line.split("=")[0]);
    expect(names.filter((name) => name?.startsWith("RUNNER_"))).toEqual([]);
    expect(answer.output).not.toContain(RUNNER_TOKEN);
    expect(answer.output).not.toContain("must-not-leak");
    expect(answer.output).toContain("PASSED_ON=yes\n");
    expect(answer.output).toContain("LC_ALL=C\n");
    expect(answer.output).toContain("NO_COLOR=1\n");
    expect(names).toContain("PATH");
  });

  it("without the sandbox a command running as the runner's user can still read the runner's environment in /proc/$PPID/environ: the scrub is no boundary", async () => {
    // Pins what docs/runner.md says of RUNNER_SANDBOX=none. If this starts failing, the
    // runner stopped keeping its settings in its initial environment: update both first. With the
    // sandbox the same read fails (sandbox-attacks.test.ts).
    const runner = await startRunnerProcess(join(root, "proc-environ"), {
      env: { RUNNER_SANDBOX: "none" },
    });
    const answer = await run(runner.base, "echo $PPID; tr '\\0' '\\n' < /proc/$PPID/environ");
    await runner.stop();
    const [ppid, ...environ] = (answer.output as string).split("\n");
    expect(Number(ppid)).toBe(runner.pid);
    expect(environ).toContain(`RUNNER_TOKENS=${RUNNER_TOKEN}`);
  });

  it("a command does not run the ~/.bashrc of the runner's user", async () => {
    const home = join(root, "home");
    mkdirSync(home);
    writeFileSync(join(home, ".bashrc"), "echo RC-WAS-READ\n");
    // Unsandboxed, where the runner's $HOME is the command's; sandboxed, it is not even there.
    const runner = await startRunnerProcess(join(root, "rc-state"), {
      env: { HOME: home, RUNNER_SANDBOX: "none" },
    });
    const answer = await run(runner.base, 'printf "$HOME"');
    await runner.stop();
    expect(answer).toMatchObject({ exit_code: 0, output: home });
  });

  it("in the sandbox a command's $HOME is its workspace and $TMPDIR its private /tmp", async () => {
    const runner = await startRunnerProcess(join(root, "home-state"), {
      env: { HOME: join(root, "runner-home"), TMPDIR: join(root, "runner-tmp") },
    });
    const answer = await run(runner.base, 'printf "%s %s %s" "$HOME" "$TMPDIR" "$(pwd)"');
    await runner.stop();
    const [home, tmp, cwd] = String(answer.output).split(" ");
    expect({ home, tmp }).toEqual({ home: cwd, tmp: "/tmp" });
  });

  it("the journal of callback tokens lives outside the command's directory, owner-only", async () => {
    const workdir = join(root, "workdir");
    const stateHome = join(root, "xdg-state");
    mkdirSync(workdir);
    // A command that names no workspace runs in the shared one, under the default work root.
    const runner = await startRunnerProcess(null, {
      cwd: workdir,
      env: { XDG_STATE_HOME: stateHome },
    });
    const started = await runnerCall(runner.base, "/v1/exec_command", {
      cmd: "sleep 30",
      yield_time_ms: 250,
    });
    const token = "callback-token-that-must-stay-private";
    const url = "http://127.0.0.1:9/v1/sessions/s/exec-jobs/h/completion";
    const armed = await runnerCall(
      runner.base,
      `/v1/processes/${started.body.session_id}/callback`,
      { url, token },
    );
    expect(armed.status).toBe(202);
    // What the model could do to find it: look around and grep where it runs.
    const look = await run(runner.base, `pwd; ls -A; grep -rl ${token} . ; true`);
    await runner.kill();

    // As root the work root is a system directory its commands' user can reach, not root's $HOME.
    const workRoot =
      process.getuid?.() === 0 ? ROOT_WORK_ROOT : join(stateHome, "exec-inbox-runner-work");
    expect(look.output).toBe(`${join(workRoot, "@shared")}\n`);
    const dir = join(stateHome, "exec-inbox-runner");
    const journal = join(dir, "callbacks.jsonl");
    expect(readFileSync(journal, "utf8")).toContain(token);
    expect(statSync(journal).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe("the runner refuses unsafe settings at start (real processes)", () => {
  it("the development token is refused on a host that is not loopback", async () => {
    const unset = await runnerRefusal({ RUNNER_HOST: "0.0.0.0", RUNNER_TOKENS: undefined });
    expect(unset.code).toBe(2);
    expect(unset.output).toMatch(
      /not starting: refusing to listen on 0\.0\.0\.0 .*dev-runner-token/,
    );
    const listed = await runnerRefusal({
      RUNNER_HOST: "0.0.0.0",
      RUNNER_TOKENS: `a-real-secret-token,${DEV_RUNNER_TOKEN}`,
    });
    expect(listed.code).toBe(2);
  });

  it("a runner setting cannot be passed on to commands", async () => {
    const refused = await runnerRefusal({ RUNNER_CHILD_ENV: "PATH,RUNNER_TOKENS" });
    expect(refused.code).toBe(2);
    expect(refused.output).toContain('RUNNER_CHILD_ENV may not pass "RUNNER_TOKENS"');
  });

  it("with its own token the runner serves a non-loopback address", async () => {
    const runner = await startRunnerProcess(join(root, "wide"), {
      env: { RUNNER_HOST: "0.0.0.0" },
    });
    expect((await run(runner.base, "printf ok")).output).toBe("ok");
    await runner.stop();
  });
});
