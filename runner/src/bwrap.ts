// Builds bubblewrap's argument list for one command, and probes once whether bwrap works here.
// Which directories exist, and what the command's workspace is, are the launcher's to say.
import { spawnSync } from "node:child_process";

export type SandboxNetwork = "none" | "host";

export interface BwrapPlan {
  readonly network: SandboxNetwork;
  /** The one writable directory, bound at its own path. */
  readonly workspace: string;
  readonly cwd: string;
  /** Directories replaced by an empty tmpfs (state dir, the other workspaces, /run). */
  readonly hidden: readonly string[];
  /** Size cap of the private /tmp and /dev/shm, so neither can be filled past the disk limit. */
  readonly tmpBytes: number;
}

/**
 * `--unshare-user` explicitly: as root, `--unshare-all` alone skips the user namespace, and
 * `--cap-drop ALL` then keeps a root that cannot unmount the tmpfs hiding the state directory.
 */
const BASE_ARGS = [
  "--unshare-user",
  "--unshare-all",
  "--disable-userns",
  "--cap-drop",
  "ALL",
  "--die-with-parent",
  "--ro-bind",
  "/",
  "/",
  "--proc",
  "/proc",
  "--dev",
  "/dev",
];

export function bwrapArgs(plan: BwrapPlan): string[] {
  return [
    ...BASE_ARGS,
    ...(plan.network === "host" ? ["--share-net"] : []),
    // Both tmpfs are RAM: without a memory cgroup only their size caps them.
    "--size",
    String(plan.tmpBytes),
    "--tmpfs",
    "/tmp",
    "--size",
    String(plan.tmpBytes),
    "--tmpfs",
    "/dev/shm",
    ...plan.hidden.flatMap((dir) => ["--tmpfs", dir]),
    "--bind",
    plan.workspace,
    plan.workspace,
    "--chdir",
    plan.cwd,
    "--",
  ];
}

export type BwrapProbe = { readonly works: true } | { readonly works: false; readonly why: string };

/** Runs `true` in the sandbox the runner would use: the only test that says it works here. */
export function probeBwrap(binary = "bwrap"): BwrapProbe {
  const probe = spawnSync(binary, [...BASE_ARGS, "--", "true"], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (probe.error !== undefined) {
    const missing = (probe.error as NodeJS.ErrnoException).code === "ENOENT";
    return {
      works: false,
      why: missing
        ? `${binary} is not installed (apt-get install bubblewrap)`
        : probe.error.message,
    };
  }
  if (probe.status === 0) return { works: true };
  const said = probe.stderr.trim().split("\n")[0] || `exit ${probe.status ?? probe.signal}`;
  return { works: false, why: `\`${binary} --unshare-all … true\` failed: ${said}` };
}
