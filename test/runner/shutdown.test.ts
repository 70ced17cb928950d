import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, spawnCollecting, waitFor, waitForHealthy } from "../support/local-stack";
import { killTree, processTree, stackDump, stillRunning, stopByPid } from "../support/process-tree";
import {
  groupMembers,
  isAlive,
  killAllRunners,
  killQuietly,
  newestCommandLeader,
  sessionMembers,
} from "./runner-process";
import {
  RUNNER_TOKEN,
  type RunnerProcess,
  runnerCall,
  startFakeInbox,
  startRunnerProcess,
} from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-shutdown-"));
afterAll(async () => {
  await killAllRunners();
  rmSync(root, { recursive: true, force: true });
});

/**
 * Starts `cmd` in the background; its group id is the runner's newest child, seen from outside
 * (inside the sandbox's PID namespace `$$` is a small number of no use out here).
 */
async function background(runner: RunnerProcess, cmd: string) {
  const started = await runnerCall(runner.base, "/v1/exec_command", { cmd, yield_time_ms: 500 });
  expect(started.status).toBe(200);
  const pgid = newestCommandLeader(runner.pid);
  expect(pgid).toBeGreaterThan(1);
  return { handle: started.body.session_id as string, pgid, output: started.body.output as string };
}

/**
 * These pin the unsandboxed group and session scan (RUNNER_SANDBOX=none), which counts exactly
 * the command's own processes; with the sandbox, the PID namespace ends them all (sandbox tests).
 */
const UNSANDBOXED = { RUNNER_SANDBOX: "none" };

describe("runner shutdown and kill (real processes)", () => {
  it("a SIGTERM leaves no process of a command behind, and the runner exits within 15 s", async () => {
    const runner = await startRunnerProcess(join(root, "term"));
    const { pgid } = await background(runner, "echo $$; sleep 100 | cat");
    // bash, sleep and cat share the group the runner created for the command.
    expect(groupMembers(pgid).length).toBeGreaterThanOrEqual(3);
    const stopped = await runner.stop("SIGTERM", 15_000);
    expect(stopped).toMatchObject({ code: null, signal: "SIGTERM" });
    await waitFor(() => (groupMembers(pgid).length === 0 ? true : undefined), 3000);
  });

  it("a command that ignores SIGTERM is SIGKILLed after the grace and reported as ended by the shutdown", async () => {
    const inbox = await startFakeInbox();
    const runner = await startRunnerProcess(join(root, "stubborn"), {
      env: { RUNNER_KILL_GRACE_MS: "500" },
    });
    // An ignored signal stays ignored across exec, so sleep and cat ignore SIGTERM too.
    const { handle, pgid } = await background(runner, "trap '' TERM; echo $$; sleep 100 | cat");
    await runnerCall(runner.base, `/v1/processes/${handle}/callback`, {
      url: inbox.url(handle),
      token: "callback-token",
    });
    const stopped = await runner.stop("SIGTERM", 15_000);
    expect(stopped).toMatchObject({ code: null, signal: "SIGTERM" });
    expect(groupMembers(pgid)).toEqual([]);
    expect(inbox.of(handle).map((attempt) => attempt.body)).toEqual([
      expect.objectContaining({ status: "killed", exit_code: null, ended_by: "runner_shutdown" }),
    ]);
    await inbox.close();
  });

  it("a process that left the group and holds the output pipe does not stop the runner from exiting, without the sandbox", async () => {
    const runner = await startRunnerProcess(join(root, "escaped"), {
      env: { ...UNSANDBOXED, RUNNER_KILL_GRACE_MS: "500" },
    });
    // setsid puts sleep in a session of its own: no group signal reaches it, and it keeps stdout.
    const { output } = await background(runner, "echo $$; setsid sleep 100 & echo $!; wait");
    const escaped = Number(output.trim().split("\n")[1]);
    expect(isAlive(escaped)).toBe(true);
    try {
      const stopped = await runner.stop("SIGTERM", 15_000);
      expect(stopped).toMatchObject({ code: null, signal: "SIGTERM" });
    } finally {
      process.kill(escaped, "SIGKILL");
    }
  });

  it("a SIGTERM to the runner also ends what a command moved to a new process group with set -m, without the sandbox", async () => {
    const runner = await startRunnerProcess(join(root, "set-m"), {
      env: { ...UNSANDBOXED, RUNNER_KILL_GRACE_MS: "300" },
    });
    // Job control gives the pipeline a group of its own; it stays in the shell's session.
    const { pgid } = await background(runner, "echo $$; set -m; sleep 123 | cat & echo $!; wait");
    const members = sessionMembers(pgid);
    try {
      expect(members.length).toBeGreaterThanOrEqual(3);
      expect(groupMembers(pgid)).toHaveLength(1); // the shell alone: sleep and cat left its group
      const stopped = await runner.stop("SIGTERM", 15_000);
      expect(stopped).toMatchObject({ code: null, signal: "SIGTERM" });
      await waitFor(() => (sessionMembers(pgid).length === 0 ? true : undefined), 3000);
    } finally {
      killQuietly(members);
    }
  });

  it("at shutdown a process of the command's session that ignores SIGTERM is SIGKILLed, even one no longer holding the output, without the sandbox", async () => {
    const runner = await startRunnerProcess(join(root, "set-m-stubborn"), {
      env: { ...UNSANDBOXED, RUNNER_KILL_GRACE_MS: "300" },
    });
    // Its own group, SIGTERM ignored, output elsewhere: once the shell is gone nothing waits on it.
    const { pgid } = await background(
      runner,
      "echo $$; set -m; (trap '' TERM; exec sleep 125) >/dev/null 2>&1 </dev/null & wait",
    );
    const members = sessionMembers(pgid);
    try {
      expect(members).toHaveLength(2);
      const stopped = await runner.stop("SIGTERM", 15_000);
      expect(stopped).toMatchObject({ code: null, signal: "SIGTERM" });
      expect(sessionMembers(pgid)).toEqual([]);
    } finally {
      killQuietly(members);
    }
  });

  it("a kill request also ends what a command moved to a new process group with set -m, SIGKILLing what ignores SIGTERM", async () => {
    const runner = await startRunnerProcess(join(root, "kill-set-m"), {
      env: { RUNNER_KILL_GRACE_MS: "300" },
    });
    const { handle, pgid } = await background(
      runner,
      "echo $$; set -m; sleep 123 | cat & trap '' TERM; sleep 124 >/dev/null 2>&1 & wait",
    );
    const members = sessionMembers(pgid);
    try {
      expect(members.length).toBeGreaterThanOrEqual(4);
      const killed = await runnerCall(runner.base, `/v1/processes/${handle}/kill`, {});
      expect(killed).toMatchObject({ status: 200, body: { exit_code: null, killed: true } });
      await waitFor(() => (sessionMembers(pgid).length === 0 ? true : undefined), 3000);
      await runner.stop();
    } finally {
      killQuietly(members);
    }
  });

  it("a process whose name holds spaces and ')' is still found in the command's session and ended, without the sandbox", async () => {
    const runner = await startRunnerProcess(join(root, "odd-comm"), {
      env: { ...UNSANDBOXED, RUNNER_KILL_GRACE_MS: "300" },
    });
    // /proc/<pid>/stat then reads "(z) R 1 1 1 x) S …": a parse that splits on spaces, or cuts at
    // the first ')', reads 1 as its session id.
    const bin = join(root, "z) R 1 1 1 x");
    copyFileSync("/bin/sleep", bin);
    const { handle, pgid } = await background(
      runner,
      `echo $$; set -m; '${bin}' 126 & echo $!; wait`,
    );
    const members = sessionMembers(pgid);
    try {
      expect(members).toHaveLength(2);
      await runnerCall(runner.base, `/v1/processes/${handle}/kill`, {});
      await waitFor(() => (sessionMembers(pgid).length === 0 ? true : undefined), 3000);
      await runner.stop();
    } finally {
      killQuietly(members);
    }
  });

  it("a kill request ends the whole group and the completion says killed, ended by kill_request", async () => {
    const inbox = await startFakeInbox();
    const runner = await startRunnerProcess(join(root, "kill"));
    const { handle, pgid } = await background(runner, "echo $$; sleep 100 | cat");
    await runnerCall(runner.base, `/v1/processes/${handle}/callback`, {
      url: inbox.url(handle),
      token: "callback-token",
    });
    const killed = await runnerCall(runner.base, `/v1/processes/${handle}/kill`, {});
    expect(killed).toMatchObject({
      status: 200,
      body: { session_id: handle, exit_code: null, killed: true },
    });
    expect(groupMembers(pgid)).toEqual([]);
    await waitFor(() => (inbox.of(handle).length > 0 ? true : undefined));
    // The kill's answer showed the model the exit, so exec-inbox need not wake an active run for it.
    expect(inbox.of(handle)[0]!.body).toMatchObject({
      status: "killed",
      exit_code: null,
      ended_by: "kill_request",
      observed: true,
    });
    // Killing again is harmless: the same final answer, nothing sent twice.
    const again = await runnerCall(runner.base, `/v1/processes/${handle}/kill`, {});
    expect(again.body).toMatchObject({ killed: false, exit_code: null });
    expect((await runnerCall(runner.base, "/v1/processes/999999/kill", {})).status).toBe(404);
    await runner.stop();
    expect(inbox.of(handle)).toHaveLength(1);
    await inbox.close();
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "npm run runner, sent %s at the PID npm holds, ends every process of its tree, frees its port, reports its running command as ended by the shutdown and prints no stack",
    async (signal) => {
      const inbox = await startFakeInbox();
      const port = await freePort();
      const { child, output, errors } = spawnCollecting("npm", ["run", "runner"], {
        RUNNER_PORT: String(port),
        RUNNER_TOKENS: RUNNER_TOKEN,
        RUNNER_STATE_DIR: join(root, `npm-${signal}`),
        RUNNER_KILL_GRACE_MS: "500",
      });
      const base = `http://127.0.0.1:${port}`;
      let tree = processTree(child.pid as number);
      try {
        await waitForHealthy(base, child, output, 30_000);
        const started = await runnerCall(base, "/v1/exec_command", {
          cmd: "sleep 100 | cat",
          yield_time_ms: 500,
        });
        const handle = started.body.session_id as string;
        await runnerCall(base, `/v1/processes/${handle}/callback`, {
          url: inbox.url(handle),
          token: "callback-token",
        });
        // npm, its shell (if any), node, the command's sandbox and its sleep and cat.
        tree = processTree(child.pid as number);
        expect(tree.map((proc) => proc.command)).toEqual(
          expect.arrayContaining([expect.stringMatching(/^sleep 100/)]),
        );
        const stopped = await stopByPid(child, tree, signal, port, 30_000);
        expect(stopped.left).toEqual([]);
        expect(stopped.portFree).toBe(true);
        expect(stopped.exit).toEqual({ code: null, signal });
        expect(stackDump(errors())).toEqual([]);
        expect(inbox.of(handle).map((attempt) => attempt.body)).toEqual([
          expect.objectContaining({ status: "killed", ended_by: "runner_shutdown" }),
        ]);
      } finally {
        killTree(stillRunning(tree));
        await inbox.close();
      }
    },
  );
});
