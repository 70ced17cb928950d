// Starts one command: its cgroups and rlimits first, then bubblewrap (or bash alone with
// RUNNER_SANDBOX=none), as the leader of a new session. Watching limits is limit-watch.ts's.
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bwrapArgs, dropTo, probeBwrap, program } from "./bwrap";
import { type CgroupRoots, CommandCgroup } from "./cgroup";
import { spawnInGroup } from "./process-group";
import { DEFAULT_LIMITS, DEFAULT_SANDBOX_USER, type SandboxSettings } from "./sandbox-settings";
import { buildSeccompFilter } from "./seccomp";
import { placeCommand } from "./workspaces";

export interface LaunchPlan {
  readonly sandbox: SandboxSettings;
  readonly cgroups: CgroupRoots;
  readonly env: Record<string, string>;
  /** Hidden from every sandboxed command: the runner's state directory. */
  readonly stateDir: string;
}

export interface Launched {
  readonly child: ChildProcessWithoutNullStreams;
  readonly cgroup: CommandCgroup;
  /** Null only for an unsandboxed command that named no workspace (today's behaviour). */
  readonly workspace: string | null;
}

/**
 * dash joins each cgroup.procs given before `--`, caps file size (512-byte blocks) and, where no
 * memory cgroup exists, address space (KiB), then execs the rest. Joining before exec is what puts
 * every later fork in the group: writing the pid from the runner after spawn would race them.
 */
const JOIN_AND_EXEC = `for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; shift; ulimit -f "$FSIZE_BLOCKS" || exit 125; [ -z "$AS_KIB" ] || ulimit -v "$AS_KIB" || exit 125; unset FSIZE_BLOCKS AS_KIB; exec "$@"`;

const BASH = ["/bin/bash", "--norc", "--noprofile", "-c"];

let embedded: SandboxSettings | undefined;

const THROWAWAY_ROOT = /^exec-inbox-runner-work-(\d+)$/;

/** Roots of embedded runners whose process is gone: a test worker is often ended without `exit`. */
function sweepThrowawayRoots(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(THROWAWAY_ROOT.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") {
        rmSync(join(tmpdir(), name), { recursive: true, force: true });
      }
    }
  }
}

/**
 * For a runner embedded in a script or test (main.ts reads the settings instead): the sandbox
 * where it works, default limits, no cgroups, `stateDir` hidden, and workspaces in a throwaway
 * root removed when the process exits.
 */
export function embeddedPlan(stateDir?: string): Omit<LaunchPlan, "env"> {
  const workRoot = join(tmpdir(), `exec-inbox-runner-work-${process.pid}`);
  if (embedded === undefined) {
    const user = process.getuid?.() === 0 ? DEFAULT_SANDBOX_USER : null;
    const filter = buildSeccompFilter();
    const seccomp = filter.ok ? filter.program : null;
    const probed = probeBwrap(user, seccomp);
    embedded = {
      mode: probed.works ? "bwrap" : "none",
      network: "none",
      workRoot,
      limits: DEFAULT_LIMITS,
      user: probed.works ? user : null,
      readOnly: [],
      seccomp: probed.works ? seccomp : null,
      warning: probed.works ? null : `commands run WITHOUT a sandbox: ${probed.why}`,
    };
    process.once("exit", () => rmSync(workRoot, { recursive: true, force: true }));
    sweepThrowawayRoots();
  }
  return {
    sandbox: embedded,
    cgroups: { memory: null, pids: null },
    stateDir: stateDir ?? workRoot,
  };
}

/**
 * dash enters `workdir` inside the sandbox and runs the rest only if the directory it reached is
 * in the workspace: a symlink swapped in after the runner's check cannot take the command out.
 */
const ENTER_WORKDIR = `cd -P -- "$1" 2>/dev/null && case "$(pwd -P)/" in "$2"/*) shift 2; exec "$@";; esac; echo "workdir $1 is outside the command's workspace: the command did not run" >&2; exit 125`;

export function launch(
  plan: LaunchPlan,
  name: string,
  command: string,
  request: { workspace?: string | undefined; workdir?: string | undefined },
): Launched {
  const { sandbox, cgroups } = plan;
  const sandboxed = sandbox.mode === "bwrap";
  const placed =
    sandboxed || request.workspace !== undefined
      ? placeCommand(sandbox.workRoot, request.workspace, request.workdir, sandbox.user, !sandboxed)
      : null;
  const cgroup = new CommandCgroup(cgroups, name, sandbox.limits);
  const inner =
    sandboxed && placed !== null
      ? [
          ...(sandbox.user === null ? [] : dropTo(sandbox.user)),
          program("bwrap"),
          ...bwrapArgs({
            network: sandbox.network,
            workspace: placed.workspace,
            // Parents first: a tmpfs over a parent would cover one mounted on its child.
            // Absolute: bwrap reads a relative mount point against its new root, not our cwd.
            // Only those a read-only mount would show (RUNNER_SANDBOX_READ_ONLY, /etc, /usr).
            hidden: [resolve(plan.stateDir), resolve(sandbox.workRoot)]
              .filter((dir) => existsSync(dir) && shownReadOnly(dir, sandbox.readOnly))
              .sort((a, b) => a.length - b.length),
            tmpBytes: sandbox.limits.diskBytes,
            readOnly: sandbox.readOnly,
            seccomp: sandbox.seccomp !== null,
          }),
        ]
      : [];
  const enter =
    placed !== null && placed.cwd !== placed.workspace
      ? ["/bin/sh", "-c", ENTER_WORKDIR, "sh", placed.cwd, placed.workspace]
      : [];
  const argv = [
    "/bin/sh",
    "-c",
    JOIN_AND_EXEC,
    "sh",
    ...cgroup.procsFiles,
    "--",
    ...inner,
    ...enter,
    ...BASH,
    command,
  ];
  const limits = {
    FSIZE_BLOCKS: String(Math.ceil(sandbox.limits.diskBytes / 512)),
    AS_KIB: cgroup.memoryDir === null ? String(Math.ceil(sandbox.limits.memoryBytes / 1024)) : "",
  };
  // Inside the sandbox the runner's $HOME and $TMPDIR are not there: the workspace and /tmp are.
  const home: Record<string, string> =
    sandboxed && placed !== null ? { HOME: placed.workspace, TMPDIR: "/tmp" } : {};
  const cwd = placed?.workspace ?? request.workdir;
  const child = spawnInGroup(
    argv,
    cwd,
    { ...plan.env, ...home, ...limits },
    sandboxed ? sandbox.seccomp : null,
  );
  return { child, cgroup, workspace: placed?.workspace ?? null };
}

/** True when `dir` is inside a directory the sandbox shows read-only. */
function shownReadOnly(dir: string, readOnly: readonly string[]): boolean {
  return ["/usr", "/etc", ...readOnly].some(
    (shown) => dir === shown || dir.startsWith(shown.endsWith("/") ? shown : `${shown}/`),
  );
}
