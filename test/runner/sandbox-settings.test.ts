import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killAllRunners, runnerRefusal } from "./runner-process";
import { RUNNER_TOKEN, runnerCall, startRunnerProcess } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-sandbox-settings-"));
// The sandbox's user (nobody, where the runner is root) passes through it to its workspace.
chmodSync(root, 0o711);
afterAll(async () => {
  await killAllRunners();
  rmSync(root, { recursive: true, force: true });
});

/** A PATH where no bwrap is found: what a machine without bubblewrap looks like to the probe. */
const NO_BWRAP = { PATH: "/nonexistent" };
const WIDE = { RUNNER_HOST: "0.0.0.0", RUNNER_TOKENS: RUNNER_TOKEN };

const run = async (base: string, cmd: string, extra: Record<string, unknown> = {}) =>
  runnerCall(base, "/v1/exec_command", { cmd, yield_time_ms: 10_000, ...extra });

describe.concurrent("choosing the sandbox at start (real runner processes)", () => {
  it("where bwrap cannot run, a loopback runner falls back to no sandbox and warns why, in its log", async () => {
    const runner = await startRunnerProcess(join(root, "fallback"), {
      env: { ...NO_BWRAP, RUNNER_WORK_ROOT: join(root, "fallback-work") },
    });
    const answer = await run(runner.base, "printf ok");
    await runner.stop();
    expect(answer.body).toMatchObject({ exit_code: 0, output: "ok" });
    expect(runner.log()).toContain(
      "WARNING: commands run WITHOUT a sandbox: bwrap is not installed (apt-get install bubblewrap)",
    );
    expect(runner.log()).toContain("[runner] sandbox none;");
  });

  it("on a host that is not loopback, a runner without a working sandbox refuses to start unless RUNNER_SANDBOX=none is set", async () => {
    const refused = await runnerRefusal({ ...WIDE, ...NO_BWRAP });
    expect(refused.code).toBe(2);
    expect(refused.output).toContain(
      "not starting: the sandbox does not work here (bwrap is not installed (apt-get install bubblewrap)); on a host that is not loopback, set RUNNER_SANDBOX=none",
    );
    const asked = await startRunnerProcess(join(root, "asked-none"), {
      env: { ...WIDE, ...NO_BWRAP, RUNNER_SANDBOX: "none" },
    });
    expect((await run(asked.base, "printf ok")).body.output).toBe("ok");
    await asked.stop();
    expect(asked.log()).not.toContain("WARNING");
  });

  it("RUNNER_SANDBOX=bwrap where bwrap cannot run, or an unknown mode, refuses to start", async () => {
    const missing = await runnerRefusal({ ...NO_BWRAP, RUNNER_SANDBOX: "bwrap" });
    expect(missing.code).toBe(2);
    expect(missing.output).toContain(
      "RUNNER_SANDBOX=bwrap, but the sandbox does not work here: bwrap is not installed",
    );
    const unknown = await runnerRefusal({ RUNNER_SANDBOX: "docker" });
    expect(unknown.output).toContain('RUNNER_SANDBOX must be bwrap or none, not "docker"');
    const network = await runnerRefusal({ RUNNER_SANDBOX_NETWORK: "bridge" });
    expect(network.output).toContain('RUNNER_SANDBOX_NETWORK must be none or host, not "bridge"');
  });

  it("a runner whose PATH has an empty entry never runs a workspace's own `setpriv` or `bwrap` as root", async () => {
    const marker = join(root, "ran-as-root");
    const runner = await startRunnerProcess(join(root, "empty-path"), {
      env: { PATH: `:${process.env.PATH}`, RUNNER_WORK_ROOT: join(root, "empty-path-work") },
    });
    // Both would run as the runner's user (root here) if `sh` or `setpriv` looked them up in the
    // working directory, which is the workspace.
    const planted = await run(
      runner.base,
      `for name in setpriv bwrap; do printf '#!/bin/sh\\ntouch ${marker}\\n' > $name; chmod 755 $name; done; echo planted`,
      { workspace: "s1" },
    );
    const next = await run(runner.base, "id -u", { workspace: "s1" });
    await runner.stop();
    expect(planted.body.output).toBe("planted\n");
    expect(next.body).toMatchObject({ exit_code: 0 });
    expect(existsSync(marker)).toBe(false);
  });

  it("RUNNER_SANDBOX_UID 0, a uid without root, and a relative read-only directory are refused at start", async () => {
    const zero = await runnerRefusal({ RUNNER_SANDBOX_UID: "0" });
    expect(zero.output).toContain("must be user and group ids other than 0");
    const relative = await runnerRefusal({ RUNNER_SANDBOX_READ_ONLY: "/opt,tools" });
    expect(relative.output).toContain(
      'RUNNER_SANDBOX_READ_ONLY lists absolute directories other than /, not "tools"',
    );
  });

  it("with RUNNER_SANDBOX_NETWORK=host a sandboxed command reaches loopback; a workspace that is not a session id is refused", async () => {
    const runner = await startRunnerProcess(join(root, "host-net"), {
      env: { RUNNER_SANDBOX_NETWORK: "host", RUNNER_WORK_ROOT: join(root, "host-net-work") },
    });
    const port = new URL(runner.base).port;
    const reached = await run(
      runner.base,
      `(exec 3<>/dev/tcp/127.0.0.1/${port}) && echo REACHED; ls /proc | grep -c '^[0-9]'`,
      { workspace: "s1" },
    );
    const refused = await run(runner.base, "true", { workspace: "../s1" });
    await runner.stop();
    expect(runner.log()).toContain("sandbox bwrap (network host;");
    expect(reached.body.output).toMatch(/^REACHED\n[1-5]\n$/);
    expect(refused.status).toBe(422);
  });
});
