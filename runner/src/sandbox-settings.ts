// Reads the sandbox's settings (RUNNER_SANDBOX*, RUNNER_WORK_ROOT, RUNNER_LIMIT_*) and decides the
// mode from what the probe found. Printing the warning or the refusal is left to main.ts.
import { join } from "node:path";
import type { BwrapProbe, SandboxNetwork } from "./bwrap";

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
  /** Set when the mode fell back to `none`: why, for the start-up warning. */
  readonly warning: string | null;
}

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

export function readSandboxSettings(
  env: NodeJS.ProcessEnv,
  stateBase: string,
  loopback: boolean,
  probe: () => BwrapProbe,
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
  let mode: SandboxMode = asked === "none" ? "none" : "bwrap";
  let warning: string | null = null;
  if (asked !== "none") {
    const found = probe();
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
    }
  }
  return {
    ok: true,
    sandbox: {
      mode,
      network,
      workRoot: env.RUNNER_WORK_ROOT || join(stateBase, "exec-inbox-runner-work"),
      limits: values as Record<keyof Limits, number>,
      warning,
    },
  };
}
