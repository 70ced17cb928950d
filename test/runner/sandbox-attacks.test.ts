// Each test is a command a hostile model would write, run by a real runner in its default sandbox
// (bwrap, network none) with small limits; each fails if the escape it tries comes back.
// docs/reliability.md lists them with their results.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SANDBOX_USER } from "../../runner/src/sandbox-settings";
import { waitFor } from "../support/local-stack";
import { isAlive, killAllRunners } from "./runner-process";
import {
  RUNNER_TOKEN,
  type RunnerProcess,
  runnerCall,
  startFakeInbox,
  startRunnerProcess,
} from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-attacks-"));
// The sandbox's user (nobody, where the runner is root) passes through it to its workspace.
chmodSync(root, 0o711);
const stateDir = join(root, "state");
const workRoot = join(root, "work");
const CALLBACK_TOKEN = "armed-callback-token-the-model-must-not-read";
const DEAD_LETTER_SECRET = "dead-letter-token-the-model-must-not-read";
const LIMITS = {
  RUNNER_LIMIT_MEMORY_MIB: "64",
  RUNNER_LIMIT_PIDS: "64",
  RUNNER_LIMIT_DISK_MIB: "8",
  RUNNER_LIMIT_OUTPUT_MIB: "1",
  RUNNER_LIMIT_WALL_MS: "4000",
  RUNNER_KILL_GRACE_MS: "300",
};

let runner: RunnerProcess;
let inbox: Awaited<ReturnType<typeof startFakeInbox>>;

beforeAll(async () => {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  // What a parked result looks like on disk (journal.ts writes the same shape).
  writeFileSync(join(stateDir, "dead-letter.jsonl"), `{"token":"${DEAD_LETTER_SECRET}"}\n`, {
    mode: 0o600,
  });
  inbox = await startFakeInbox();
  runner = await startRunnerProcess(stateDir, {
    env: { RUNNER_WORK_ROOT: workRoot, ...LIMITS },
  });
  // Unsandboxed, these commands would really kill and write on this machine: refuse to go on.
  if (!runner.log().includes("sandbox bwrap (network none;")) {
    throw new Error(`the runner did not start sandboxed:\n${runner.log()}`);
  }
  // An armed callback: its token is now in the journal, where a command must not find it.
  const armedBy = await exec("sleep 3", "victim", 250);
  await runnerCall(runner.base, `/v1/processes/${armedBy.session_id}/callback`, {
    url: inbox.url(armedBy.session_id),
    token: CALLBACK_TOKEN,
  });
});

afterAll(async () => {
  await killAllRunners();
  await inbox.close();
  // GNU rm, which walks by descriptors: one test leaves a path longer than Node's rm can remove.
  execFileSync("rm", ["-rf", root]);
});

async function exec(cmd: string, workspace = "attacker", yieldMs = 10_000) {
  const answer = await runnerCall(runner.base, "/v1/exec_command", {
    cmd,
    workspace,
    yield_time_ms: yieldMs,
  });
  expect(answer.status).toBe(200);
  return answer.body;
}

/** Runs `cmd` in the background with its completion armed; resolves with the completion's body. */
async function completionOf(cmd: string, workspace = "attacker") {
  // The pause outlasts the yield, so the command has a handle to arm.
  const started = await exec(`sleep 0.5; ${cmd}`, workspace, 250);
  const handle = started.session_id as string;
  expect(handle).toBeDefined();
  await runnerCall(runner.base, `/v1/processes/${handle}/callback`, {
    url: inbox.url(handle),
    token: "callback-token",
  });
  // The runner also heartbeats an armed job: only the completion is asked for.
  const completions = () => inbox.of(handle).filter((a) => a.path.endsWith("/completion"));
  await waitFor(() => (completions().length > 0 ? true : undefined), 15_000);
  return completions()[0]?.body;
}

/**
 * Which cgroups the runner holds, read from the cgroup file systems themselves (its group there is
 * named after its pid), not from its log: a wrong answer here would let a fork bomb loose.
 */
const cgroupsHeld = () => {
  const held = (controller: string): boolean => {
    const own = readFileSync(`/proc/${runner.pid}/cgroup`, "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .find(([, names]) => names?.split(",").includes(controller))?.[2];
    return (
      own !== undefined &&
      existsSync(join(`/sys/fs/cgroup/${controller}`, own, `exec-inbox-runner-${runner.pid}`))
    );
  };
  return { memory: held("memory"), pids: held("pids") };
};

const healthy = async () => (await fetch(`${runner.base}/healthz`)).ok;

/** Host processes whose whole command line is `args` (seen outside every namespace). */
const hostProcesses = (args: string): string[] =>
  execFileSync("ps", ["-e", "-o", "args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.trim() === args);

describe.concurrent("a hostile command in the sandbox (real runner, bwrap)", () => {
  it("cannot read RUNNER_TOKENS from /proc/$PPID/environ, /proc/*/environ or ps e", async () => {
    const answer = await exec(
      "cat /proc/$PPID/environ; cat /proc/*/environ; ps e -A; echo; ps -A -o pid=,args=",
    );
    expect(answer.output).not.toContain(RUNNER_TOKEN);
    expect(answer.output).not.toContain("RUNNER_");
    // Its PID namespace holds only the sandbox: bwrap's reaper, the shell and what it started.
    expect(answer.output).not.toMatch(/runner\/main\.ts|tsx/);
  });

  it("cannot read the journal of armed callback tokens or the dead letters", async () => {
    const answer = await exec(
      `ls -la ${stateDir}; cat ${stateDir}/callbacks.jsonl ${stateDir}/dead-letter.jsonl; grep -rs ${CALLBACK_TOKEN} ${root}; true`,
    );
    expect(answer.output).not.toContain(CALLBACK_TOKEN);
    expect(answer.output).not.toContain(DEAD_LETTER_SECRET);
    expect(answer.output).toContain("No such file or directory");
    // The runner itself still has both.
    expect(readFileSync(join(stateDir, "callbacks.jsonl"), "utf8")).toContain(CALLBACK_TOKEN);
  });

  it("cannot kill -9 the runner: its pid is not in the command's PID namespace", async () => {
    const answer = await exec(
      // Nothing here may harm the machine if the sandbox regressed: the host's init ignores it too.
      `kill -9 ${runner.pid}; kill -9 1; echo still-here`,
    );
    expect(answer.output).toContain("No such process");
    expect(isAlive(runner.pid)).toBe(true);
    expect(await healthy()).toBe(true);
  });

  it("cannot call the runner's API on loopback: its network namespace holds only its own lo", async () => {
    const port = new URL(runner.base).port;
    const answer = await exec(
      `(exec 3<>/dev/tcp/127.0.0.1/${port}) && echo REACHED; curl -s -m 2 -H 'authorization: Bearer ${RUNNER_TOKEN}' ${runner.base}/healthz && echo REACHED; echo curl=$?`,
    );
    expect(answer.output).not.toContain("REACHED");
    expect(answer.output).toContain("Connection refused");
  });

  it("cannot write outside its workspace: not /, not $HOME, not /tmp of the host, not another session's workspace", async () => {
    const victim = join(workRoot, "victim");
    await exec("echo mine > notes.txt", "victim");
    const marker = `attack-${process.pid}`;
    const answer = await exec(
      `echo x > /${marker}; echo x > ~/${marker}; echo x > ${tmpdir()}/${marker}; ls ${victim}; echo x > ${victim}/notes.txt; echo x > ${victim}/${marker}; echo x > ./ok.txt && echo wrote-own`,
    );
    expect(answer.output).toContain("Read-only file system");
    expect(answer.output).toContain("wrote-own");
    expect(existsSync(`/${marker}`)).toBe(false);
    expect(existsSync(join(homedir(), marker))).toBe(false);
    expect(existsSync(join(tmpdir(), marker))).toBe(false);
    expect(existsSync(join(victim, marker))).toBe(false);
    expect(readFileSync(join(victim, "notes.txt"), "utf8")).toBe("mine\n");
    expect(readFileSync(join(workRoot, "attacker", "ok.txt"), "utf8")).toBe("x\n");
  });

  it("a `setsid sleep 600 &` or nohup daemon is gone once the command exits", async () => {
    const answer = await exec("setsid sleep 6001 & nohup sleep 6002 >/dev/null 2>&1 & echo left");
    expect(answer).toMatchObject({ exit_code: 0, output: "left\n" });
    const left = () => [...hostProcesses("sleep 6001"), ...hostProcesses("sleep 6002")];
    await waitFor(() => (left().length === 0 ? true : undefined), 3000);
  });

  it("a setsid daemon is gone after a kill request", async () => {
    const started = await exec("setsid sleep 6003 & sleep 100", "attacker", 500);
    expect(hostProcesses("sleep 6003")).toHaveLength(1);
    await runnerCall(runner.base, `/v1/processes/${started.session_id}/kill`, {});
    await waitFor(() => (hostProcesses("sleep 6003").length === 0 ? true : undefined), 3000);
  });

  it("a fork bomb ends the command with ended_by pids_limit, not the runner", async ({ skip }) => {
    // Without a pids cgroup nothing bounds it but the machine: not a thing to run on one.
    if (!cgroupsHeld().pids) skip("this machine gives the runner no writable pids cgroup");
    // The shell stays: one that exits at once takes the bomb with its namespace, limit or not.
    const body = await completionOf(":(){ :|:& };:; sleep 30");
    expect(body).toMatchObject({ status: "killed", exit_code: null, ended_by: "pids_limit" });
    expect(await healthy()).toBe(true);
  });

  it("a 4 GiB allocation ends the command with ended_by memory_limit (without a memory cgroup, RLIMIT_AS refuses it)", async () => {
    const body = await completionOf("perl -e '$x = \"x\" x (4 * 1024 ** 3); print length $x'");
    if (cgroupsHeld().memory) {
      expect(body).toMatchObject({ status: "killed", exit_code: null, ended_by: "memory_limit" });
    } else {
      expect(body).toMatchObject({ status: "completed", ended_by: "process" });
      expect(body.output).toContain("Out of memory");
    }
  });

  it("`yes > file` stops at the disk limit and ends the command with ended_by disk_limit", async () => {
    const answer = await exec("yes > fill.txt", "filler");
    expect(answer).toMatchObject({ exit_code: null, ended_by: "disk_limit" });
    const size = Number(execFileSync("stat", ["-c", "%s", join(workRoot, "filler", "fill.txt")]));
    expect(size).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  it("cannot fill /tmp or /dev/shm, both RAM, past the disk limit", async () => {
    const answer = await exec(
      "yes > /tmp/fill; yes > /dev/shm/fill; stat -c %s /tmp/fill /dev/shm/fill",
      "ram-filler",
    );
    // Only stat's lines: bash's own "File size limit exceeded" (stderr) may arrive after them.
    const sizes = (answer.output as string)
      .split("\n")
      .filter((line) => /^\d+$/.test(line.trim()))
      .map(Number);
    expect(sizes).toHaveLength(2);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  it("`yes` to stdout ends the command with ended_by output_limit", async () => {
    const answer = await exec("yes");
    expect(answer).toMatchObject({ exit_code: null, ended_by: "output_limit" });
  });

  it("a command past its wall time ends with ended_by runner_timeout", async () => {
    const body = await completionOf("sleep 60");
    expect(body).toMatchObject({ status: "killed", exit_code: null, ended_by: "runner_timeout" });
  });

  it("cannot ptrace the runner: it has no such process to attach to", async () => {
    const answer = await exec(
      `strace -p ${runner.pid} 2>&1 | head -2; gdb -batch -p ${runner.pid} 2>&1 | grep -i -m1 'ptrace\\|no such\\|unable'; cat /proc/${runner.pid}/mem; true`,
    );
    expect(answer.output).toMatch(/No such process|No such file or directory/);
    expect(answer.output).not.toMatch(/attached|Attaching to process/);
    expect(isAlive(runner.pid)).toBe(true);
  });
});

/** The sandbox's user where the runner is root (as here and in CI); the runner's own otherwise. */
const SANDBOX_UID = process.getuid?.() === 0 ? DEFAULT_SANDBOX_USER.uid : process.getuid?.();
const CHECKOUT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

describe.concurrent("a hostile command against the host's kernel and files", () => {
  it("runs as an unprivileged host user with no capability, never as the host's root", async () => {
    const started = await exec(
      "id -u; grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status; exec sleep 6011",
      "attacker",
      1000,
    );
    const inside = String(started.output);
    expect(inside.split("\n")[0]).toBe(String(SANDBOX_UID));
    expect(inside.match(/^Cap\w+:\s+0+$/gm)).toHaveLength(4);
    // What the host sees: the command's process belongs to that uid, not to 0.
    const uids = execFileSync("ps", ["-e", "-o", "uid=,args="], { encoding: "utf8" })
      .split("\n")
      .filter((line) => / sleep 6011$/.test(line.trim()) && !line.includes("id -u"))
      .map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(uids).toEqual([SANDBOX_UID]);
    await runnerCall(runner.base, `/v1/processes/${started.session_id}/kill`, {});
    expect(SANDBOX_UID).not.toBe(0);
  });

  it("cannot write /proc/sys (core_pattern, lease-break-time), /proc/sysrq-trigger or /sys", async () => {
    const before = {
      core: readFileSync("/proc/sys/kernel/core_pattern", "utf8"),
      lease: readFileSync("/proc/sys/fs/lease-break-time", "utf8"),
    };
    const answer = await exec(
      [
        "printf '#!/bin/sh\\ncat /proc/1/environ > /tmp/pwned\\n' > core.sh; chmod +x core.sh",
        `echo "|$PWD/core.sh" > /proc/sys/kernel/core_pattern`,
        "echo 7 > /proc/sys/fs/lease-break-time",
        "echo h > /proc/sysrq-trigger",
        "echo writable: $(find /proc/sys /proc/sysrq-trigger /proc/irq /proc/bus -writable 2>/dev/null | wc -l)",
        "ls /sys",
        "true",
      ].join("; "),
    );
    const output = String(answer.output);
    expect(output).toContain("writable: 0");
    expect(output).toMatch(/core_pattern: (Permission denied|Read-only file system)/);
    expect(output).toMatch(/lease-break-time: (Permission denied|Read-only file system)/);
    expect(output).toContain("ls: cannot access '/sys': No such file or directory");
    expect(readFileSync("/proc/sys/kernel/core_pattern", "utf8")).toBe(before.core);
    expect(readFileSync("/proc/sys/fs/lease-break-time", "utf8")).toBe(before.lease);
  });

  it("loses the system calls no shell command needs (seccomp): keyctl, io_uring, mount, unshare, the x32 ABI", async () => {
    const answer = await exec(
      [
        "grep -E '^Seccomp:' /proc/self/status",
        // keyctl(GET_KEYRING_ID, session keyring) and io_uring_setup work unfiltered for any user.
        `perl -e 'my $p = "\\0" x 120; print "keyctl=", syscall(250, 0, -3, 0), " $!\\n"; print "io_uring=", syscall(425, 1, $p), " $!\\n"'`,
        "unshare -r true; mount -t tmpfs none /tmp",
        // getpid through the x32 ABI: a foreign ABI kills the caller.
        `perl -e 'syscall(0x40000000 | 39); print "x32 survived\\n"'; echo x32-exit=$?`,
      ].join("; "),
    );
    const output = String(answer.output);
    expect(output).toMatch(/^Seccomp:\s+2$/m);
    expect(output).toContain("keyctl=-1 Operation not permitted");
    expect(output).toContain("io_uring=-1 Operation not permitted");
    expect(output).toMatch(/unshare: .*Operation not permitted/);
    expect(output).toMatch(
      /mount: .*(permission denied|must be superuser|Operation not permitted)/i,
    );
    expect(output).not.toMatch(/^x32 survived$/m);
    expect(output).toContain("x32-exit=159"); // 128 + SIGSYS
  });

  it("sees the system read-only and its workspace, not the host's tree: no checkout, no .wrangler state, no $HOME, no /var", async () => {
    const answer = await exec(
      `ls ${CHECKOUT}; cat ${join(CHECKOUT, "package.json")}; ls -d ${join(CHECKOUT, ".wrangler")} ${homedir()} /root /var /srv /home /run /opt; ls / | tr '\\n' ' '; echo; echo ok`,
    );
    const output = String(answer.output);
    expect(output).toContain(
      `ls: cannot access '${CHECKOUT.replace(/\/$/, "")}': No such file or directory`,
    );
    expect(output).not.toContain('"name": "exec-inbox"');
    for (const dir of [
      join(CHECKOUT, ".wrangler"),
      homedir(),
      "/root",
      "/var",
      "/srv",
      "/home",
      "/run",
      "/opt",
    ]) {
      expect(output).toContain(`cannot access '${dir}': No such file or directory`);
    }
    expect(output).toMatch(/^bin dev etc lib .*proc .*tmp usr $/m);
  });

  it("cannot store anything in /, /dev or the mount points of its root: only the workspace and the capped /tmp take writes", async () => {
    // (The work root of this file is under /tmp, which is the command's own capped tmpfs.)
    const dirs = ["/", "/dev", "/etc", "/usr", "/proc", "/proc/sys"];
    const answer = await exec(
      `for dir in ${dirs.join(" ")}; do if (head -c 1048576 /dev/zero > $dir/fill) 2>/dev/null; then echo "wrote $dir"; else echo "refused $dir"; fi; done`,
      "ram-filler-2",
    );
    expect(String(answer.output).trim().split("\n")).toEqual(dirs.map((dir) => `refused ${dir}`));
  });

  it("files it writes in its workspace belong to the sandbox's user, not to root", async () => {
    await exec("echo mine > owned.txt", "owner");
    expect(statSync(join(workRoot, "owner", "owned.txt")).uid).toBe(SANDBOX_UID);
  });
});

describe("the disk limit however the workspace is shaped (real runner, bwrap)", () => {
  // A runner of its own, with no wall time to race: only the disk limit can end these commands.
  let disk: { exec: (cmd: string, workspace: string) => Promise<Record<string, unknown>> };
  beforeAll(async () => {
    const own = await startRunnerProcess(join(root, "disk-state"), {
      env: { RUNNER_WORK_ROOT: join(root, "disk-work"), RUNNER_LIMIT_DISK_MIB: "8" },
    });
    disk = {
      exec: async (cmd, workspace) => {
        const answer = await runnerCall(own.base, "/v1/exec_command", {
          cmd,
          workspace,
          yield_time_ms: 20_000,
        });
        expect(answer.status).toBe(200);
        return answer.body;
      },
    };
  });

  it("a workspace of 25,000 small files ends the command with ended_by disk_limit", async () => {
    // 25,000 × 1 KB: 25 MB of files in an 8 MiB workspace, each file too small for RLIMIT_FSIZE.
    const answer = await disk.exec(
      `perl -e 'for (1..25_000) { open my $f, ">", "f$_" or die; print $f "x" x 1000 }'; sleep 30`,
      "many-files",
    );
    expect(answer).toMatchObject({ exit_code: null, ended_by: "disk_limit" });
  });

  it("files 40 directories deep, past what the runner walks itself, are counted by find", async () => {
    const answer = await disk.exec(
      "for i in $(seq 40); do mkdir d && cd d; done; head -c 5M /dev/zero > f1; head -c 5M /dev/zero > f2; sleep 30",
      "find-files",
    );
    expect(answer).toMatchObject({ exit_code: null, ended_by: "disk_limit" });
  });

  it("files below a path longer than PATH_MAX still count toward the disk limit", async () => {
    // 18 directories of 250 characters: past 4,096 bytes, where a walk by path fails.
    const answer = await disk.exec(
      `n=$(printf 'd%.0s' $(seq 250)); for i in $(seq 18); do mkdir $n && cd $n; done; pwd -P | wc -c; head -c 5M /dev/zero > f1; head -c 5M /dev/zero > f2; sleep 30`,
      "deep-files",
    );
    expect(Number(String(answer.output).trim())).toBeGreaterThan(4096);
    expect(answer).toMatchObject({ exit_code: null, ended_by: "disk_limit" });
  });
});

describe("a runner that stops (real runner, bwrap)", () => {
  it("leaves no setsid daemon of a command behind", async () => {
    const own = await startRunnerProcess(join(root, "shutdown-state"), {
      env: { RUNNER_WORK_ROOT: workRoot, RUNNER_KILL_GRACE_MS: "300" },
    });
    await runnerCall(own.base, "/v1/exec_command", {
      cmd: "setsid sleep 6004 & nohup sleep 6005 >/dev/null 2>&1 & sleep 100",
      yield_time_ms: 500,
    });
    expect(hostProcesses("sleep 6004")).toHaveLength(1);
    expect(hostProcesses("sleep 6005")).toHaveLength(1);
    expect(await own.stop("SIGTERM", 10_000)).toMatchObject({ code: null, signal: "SIGTERM" });
    expect(hostProcesses("sleep 6004")).toEqual([]);
    expect(hostProcesses("sleep 6005")).toEqual([]);
  });

  it("leaves nothing of a command behind when the runner itself is SIGKILLed", async () => {
    const own = await startRunnerProcess(join(root, "sigkill-state"), {
      env: { RUNNER_WORK_ROOT: workRoot },
    });
    await runnerCall(own.base, "/v1/exec_command", {
      cmd: "setsid sleep 6006 & sleep 6007",
      yield_time_ms: 500,
    });
    expect(hostProcesses("sleep 6006")).toHaveLength(1);
    // The runner alone: bwrap's --die-with-parent must end the rest.
    process.kill(own.pid, "SIGKILL");
    const left = () => [...hostProcesses("sleep 6006"), ...hostProcesses("sleep 6007")];
    await waitFor(() => (left().length === 0 ? true : undefined), 3000);
  });
});
