// Builds the command line that puts one command in its sandbox — as the sandbox user where the
// runner is root, inside bubblewrap — and probes once whether that works here. Which directories
// exist, and what the command's workspace is, are the launcher's to say.
import { spawnSync } from "node:child_process";
import { accessSync, constants, lstatSync, readlinkSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

export type SandboxNetwork = "none" | "host";

/** The host user a command runs as when the runner is root (never uid 0: see docs/runner.md). */
export interface SandboxUser {
  readonly uid: number;
  readonly gid: number;
}

export interface BwrapPlan {
  readonly network: SandboxNetwork;
  /** The one writable directory, bound at its own (real) path; the command starts in it. */
  readonly workspace: string;
  /** Directories inside a read-only mount to cover with an empty read-only tmpfs (state, work root). */
  readonly hidden: readonly string[];
  /** Size cap of the private /tmp and /dev/shm, so neither can be filled past the disk limit. */
  readonly tmpBytes: number;
  /** Host directories shown read-only besides the system's own (`RUNNER_SANDBOX_READ_ONLY`). */
  readonly readOnly: readonly string[];
  /** Whether fd 3 carries a seccomp program for bwrap to load. */
  readonly seccomp: boolean;
}

/** The file descriptor the launcher hands the seccomp program on. */
export const SECCOMP_FD = 3;

/**
 * `--unshare-user` explicitly: as root, `--unshare-all` alone skips the user namespace. The
 * command gets no capability, and no user namespace of its own to gain one in.
 */
const NAMESPACES = [
  "--unshare-user",
  "--unshare-all",
  "--disable-userns",
  "--cap-drop",
  "ALL",
  "--die-with-parent",
];

/**
 * What a command needs of the system: programs and libraries under /usr (with the top-level links
 * of a merged-/usr system) and /etc. Not the host's whole tree: not $HOME, not the checkout the
 * runner or exec-inbox runs from, not /var, /srv, /run, /sys.
 */
const SYSTEM_DIRS = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** A read-only bind of each directory that exists, or the same link where it is a symlink. */
function systemMounts(readOnly: readonly string[]): string[] {
  return [...SYSTEM_DIRS, ...readOnly].flatMap((dir) => {
    try {
      const stat = lstatSync(dir);
      if (stat.isSymbolicLink()) return ["--symlink", readlinkSync(dir), dir];
      return stat.isDirectory() ? ["--ro-bind", dir, dir] : [];
    } catch {
      return [];
    }
  });
}

/**
 * Where `name` is on PATH, as the shell would find it, or null. Only absolute entries count: an
 * empty or relative one means the working directory, which for a command is its workspace.
 */
export function findOnPath(name: string, path = process.env.PATH ?? ""): string | null {
  for (const dir of path.split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not in this one.
    }
  }
  return null;
}

const programs = new Map<string, string>();

/** The absolute path root runs `name` from: never looked up again, never in a workspace. */
export function program(name: "bwrap" | "setpriv"): string {
  const known = programs.get(name) ?? findOnPath(name) ?? `/usr/bin/${name}`;
  programs.set(name, known);
  return known;
}

/** Runs the rest as `user`, with no supplementary group, no capability, and no way to regain one. */
export const dropTo = (user: SandboxUser, setpriv = program("setpriv")): string[] => [
  setpriv,
  `--reuid=${user.uid}`,
  `--regid=${user.gid}`,
  "--clear-groups",
  "--inh-caps=-all",
  "--bounding-set=-all",
  "--no-new-privs",
];

/** The sandbox itself, up to the workspace: namespaces, the system read-only, private RAM dirs. */
function sandboxArgs(plan: Omit<BwrapPlan, "workspace">): string[] {
  return [
    ...NAMESPACES,
    ...(plan.network === "host" ? ["--share-net"] : []),
    ...systemMounts(plan.readOnly),
    "--proc",
    "/proc",
    // Read-only: what its own namespaces would let it tune there (IPC limits, pid_max) too.
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--dev",
    "/dev",
    // Both tmpfs are RAM: without a memory cgroup only their size caps them.
    "--size",
    String(plan.tmpBytes),
    "--tmpfs",
    "/tmp",
    "--size",
    String(plan.tmpBytes),
    "--tmpfs",
    "/dev/shm",
    // /dev is a tmpfs too: read-only, so nothing can be stored there (its devices still work).
    "--remount-ro",
    "/dev",
    ...plan.hidden.flatMap((dir) => ["--tmpfs", dir, "--remount-ro", dir]),
    ...(plan.seccomp ? ["--seccomp", String(SECCOMP_FD)] : []),
  ];
}

export function bwrapArgs(plan: BwrapPlan): string[] {
  return [
    ...sandboxArgs(plan),
    "--bind",
    plan.workspace,
    plan.workspace,
    // Last: the root bwrap made the mount points in is a tmpfs of its own, unbounded until now.
    "--remount-ro",
    "/",
    "--chdir",
    plan.workspace,
    "--",
  ];
}

export type BwrapProbe = { readonly works: true } | { readonly works: false; readonly why: string };

/** Runs `true` in the sandbox the runner would use, as the user it would use: the only real test. */
export function probeBwrap(user: SandboxUser | null, seccomp: Uint8Array | null): BwrapProbe {
  const binary = findOnPath("bwrap");
  if (binary === null)
    return { works: false, why: "bwrap is not installed (apt-get install bubblewrap)" };
  const setpriv = user === null ? null : findOnPath("setpriv");
  if (user !== null && setpriv === null) {
    return { works: false, why: "setpriv is not installed (apt-get install util-linux)" };
  }
  const sandbox = sandboxArgs({
    network: "none",
    hidden: [],
    tmpBytes: 1024 * 1024,
    readOnly: [],
    seccomp: false,
  });
  const argv = [
    ...(user === null || setpriv === null ? [] : dropTo(user, setpriv)),
    binary,
    ...sandbox,
    // The probe hands the program on stdin; commands get theirs on SECCOMP_FD.
    ...(seccomp === null ? [] : ["--seccomp", "0"]),
    "--remount-ro",
    "/",
    "--",
    "true",
  ];
  const [file = binary, ...args] = argv;
  const probe = spawnSync(file, args, {
    encoding: "utf8",
    timeout: 10_000,
    input: seccomp ?? "",
  });
  if (probe.error !== undefined) return { works: false, why: probe.error.message };
  if (probe.status === 0) return { works: true };
  const said = probe.stderr.trim().split("\n")[0] || `exit ${probe.status ?? probe.signal}`;
  const as = user === null ? "" : ` as uid ${user.uid}`;
  return { works: false, why: `\`bwrap --unshare-all … true\`${as} failed: ${said}` };
}
