// Reads the sandbox's settings (RUNNER_SANDBOX*, RUNNER_WORK_ROOT, RUNNER_LIMIT_*) and decides the
// mode, the user and the filter from what the probes found. Printing warnings or the refusal is
// left to main.ts.
import { dirname, isAbsolute, join } from "node:path";
import type { BwrapProbe, SandboxNetwork, SandboxUser } from "./bwrap";
import type { SeccompBuild } from "./seccomp";
import { blockedOnTheWay } from "./workspaces";

export type SandboxMode = "bwrap" | "none";

export interface Limits {
  /** Wall time per command; past it the completion says `runner_timeout`. */
  readonly wallMs: number;
  readonly memoryBytes: number;
  readonly pids: number;
  /** Bytes of output one command may write (stdout + stderr). */
  readonly outputBytes: number;
  /** Bytes the command's workspace may hold, and the size of its private /tmp. */
  readonly diskBytes: number;
}

export interface SandboxSettings {
  readonly mode: SandboxMode;
  readonly network: SandboxNetwork;
  readonly workRoot: string;
  readonly limits: Limits;
  /** Who commands run as where the runner is root; null: as the runner's own user. */
  readonly user: SandboxUser | null;
  /** Host directories a sandboxed command sees read-only besides /usr and /etc. */
  readonly readOnly: readonly string[];
  /** The seccomp program bwrap loads; null where it could not be built (see `warning`). */
  readonly seccomp: Uint8Array | null;
  /** Set when the sandbox is weaker than asked (no sandbox, no filter): why, for the log. */
  readonly warning: string | null;
}

/** nobody:nogroup, on every Debian; an operator may name a uid of its own (docs/runner.md). */
export const DEFAULT_SANDBOX_USER: SandboxUser = { uid: 65534, gid: 65534 };

/** Where the runner is root: a work root its commands' user can reach (root's $HOME is 0700). */
export const ROOT_WORK_ROOT = "/var/lib/exec-inbox-runner-work";

type Parsed = { ok: true; sandbox: SandboxSettings } | { ok: false; error: string };

const MIB = 1024 * 1024;

export const DEFAULT_LIMITS: Limits = {
  wallMs: 2 * 3_600_000,
  memoryBytes: 2048 * MIB,
  pids: 512,
  outputBytes: 64 * MIB,
  diskBytes: 1024 * MIB,
};

function limit(env: NodeJS.ProcessEnv, name: string, fallback: number, unit: number) {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value > 0
    ? value * unit
    : `${name} must be a positive integer`;
}

function sandboxUser(env: NodeJS.ProcessEnv, root: boolean): SandboxUser | null | string {
  const asked = env.RUNNER_SANDBOX_UID || env.RUNNER_SANDBOX_GID;
  if (!root)
    return asked
      ? "RUNNER_SANDBOX_UID and RUNNER_SANDBOX_GID need the runner to run as root"
      : null;
  const id = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const value = Number(raw);
    return Number.isSafeInteger(value) && value > 0 && value < 2 ** 32 - 1 ? value : null;
  };
  const uid = id("RUNNER_SANDBOX_UID", DEFAULT_SANDBOX_USER.uid);
  const gid = id("RUNNER_SANDBOX_GID", DEFAULT_SANDBOX_USER.gid);
  // Never uid 0: a command that is the host's root can reach it through /proc/sys.
  if (uid === null || gid === null) {
    return "RUNNER_SANDBOX_UID and RUNNER_SANDBOX_GID must be user and group ids other than 0";
  }
  return { uid, gid };
}

export function readSandboxSettings(
  env: NodeJS.ProcessEnv,
  stateBase: string,
  loopback: boolean,
  probe: (user: SandboxUser | null, seccomp: Uint8Array | null) => BwrapProbe,
  buildSeccomp: () => SeccompBuild,
  root = process.getuid?.() === 0,
): Parsed {
  const asked = env.RUNNER_SANDBOX ?? "";
  if (!["", "bwrap", "none"].includes(asked)) {
    return { ok: false, error: `RUNNER_SANDBOX must be bwrap or none, not "${asked}"` };
  }
  const network = env.RUNNER_SANDBOX_NETWORK || "none";
  if (network !== "none" && network !== "host") {
    return { ok: false, error: `RUNNER_SANDBOX_NETWORK must be none or host, not "${network}"` };
  }
  const values = {
    wallMs: limit(env, "RUNNER_LIMIT_WALL_MS", DEFAULT_LIMITS.wallMs, 1),
    memoryBytes: limit(env, "RUNNER_LIMIT_MEMORY_MIB", DEFAULT_LIMITS.memoryBytes, MIB),
    pids: limit(env, "RUNNER_LIMIT_PIDS", DEFAULT_LIMITS.pids, 1),
    outputBytes: limit(env, "RUNNER_LIMIT_OUTPUT_MIB", DEFAULT_LIMITS.outputBytes, MIB),
    diskBytes: limit(env, "RUNNER_LIMIT_DISK_MIB", DEFAULT_LIMITS.diskBytes, MIB),
  };
  const invalid = Object.values(values).find((value) => typeof value === "string");
  if (typeof invalid === "string") return { ok: false, error: invalid };
  const user = sandboxUser(env, root);
  if (typeof user === "string") return { ok: false, error: user };
  const readOnly = (env.RUNNER_SANDBOX_READ_ONLY ?? "")
    .split(",")
    .map((dir) => dir.trim())
    .filter(Boolean);
  const relative = readOnly.find((dir) => !isAbsolute(dir) || dir === "/");
  if (relative !== undefined) {
    return {
      ok: false,
      error: `RUNNER_SANDBOX_READ_ONLY lists absolute directories other than /, not "${relative}"`,
    };
  }
  let mode: SandboxMode = asked === "none" ? "none" : "bwrap";
  let warning: string | null = null;
  let seccomp: Uint8Array | null = null;
  if (asked !== "none") {
    const filter = buildSeccomp();
    seccomp = filter.ok ? filter.program : null;
    const found = probe(user, seccomp);
    if (!found.works && asked === "bwrap") {
      return {
        ok: false,
        error: `RUNNER_SANDBOX=bwrap, but the sandbox does not work here: ${found.why}`,
      };
    }
    if (!found.works) {
      // Like the development token: an unsandboxed runner may only serve this machine, unasked.
      if (!loopback) {
        return {
          ok: false,
          error: `the sandbox does not work here (${found.why}); on a host that is not loopback, set RUNNER_SANDBOX=none to run commands unsandboxed`,
        };
      }
      mode = "none";
      warning = `commands run WITHOUT a sandbox: ${found.why}. Set RUNNER_SANDBOX=none to silence this, or install bubblewrap`;
    } else if (!filter.ok) {
      warning = `commands run without a seccomp filter: ${filter.why}`;
    }
  }
  const workRoot =
    env.RUNNER_WORK_ROOT ||
    (user === null ? join(stateBase, "exec-inbox-runner-work") : ROOT_WORK_ROOT);
  const blocked =
    mode === "bwrap" && user !== null ? blockedOnTheWay(dirname(workRoot), user) : null;
  if (blocked !== null) {
    return {
      ok: false,
      error: `the sandbox's user (uid ${user?.uid}) cannot reach the work root ${workRoot}: ${blocked} lets no other user pass. Set RUNNER_WORK_ROOT to a directory others may pass through (the default as root is ${ROOT_WORK_ROOT})`,
    };
  }
  return {
    ok: true,
    sandbox: {
      mode,
      network,
      workRoot,
      limits: values as Record<keyof Limits, number>,
      user: mode === "bwrap" ? user : null,
      readOnly,
      seccomp: mode === "bwrap" ? seccomp : null,
      warning,
    },
  };
}
