// Reads the runner's settings from its environment and refuses unsafe ones before anything starts.
// Printing the refusal and exiting is left to main.ts.
import { join } from "node:path";
import { MAX_PART_BYTES } from "../../shared/full-output";
import { type BwrapProbe, probeBwrap, type SandboxUser } from "./bwrap";
import { DEFAULT_MAX_FULL_OUTPUT_BYTES, DEFAULT_PART_BYTES } from "./output-spool";
import { readSandboxSettings, type SandboxSettings } from "./sandbox-settings";
import { buildSeccompFilter } from "./seccomp";

export const DEV_RUNNER_TOKEN = "dev-runner-token";

interface RunnerSettings {
  readonly port: number;
  readonly host: string;
  readonly tokens: readonly string[];
  readonly stateDir: string;
  /** Names passed to commands beyond the allow-list of child-env.ts. */
  readonly childEnvNames: readonly string[];
  /** How long an exited process stays readable once nothing is owed for it. */
  readonly retentionMs: number;
  /** SIGTERM → SIGKILL delay when a process group is ended. */
  readonly killGraceMs: number;
  /** How long a doubtful refusal (401, 404, 422…) is retried before the result is parked. */
  readonly callbackGiveUpMs: number;
  /** A command's whole output is spooled up to this many bytes; past it only head and tail stay. */
  readonly maxFullOutputBytes: number;
  /** Parts of an uploaded full output (at most 64 MiB, exec-inbox's part limit). */
  readonly partBytes: number;
  readonly sandbox: SandboxSettings;
}

type SettingsResult =
  | { readonly ok: true; readonly settings: RunnerSettings }
  | { readonly ok: false; readonly error: string };

const HOUR = 3_600_000;

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/** `$XDG_STATE_HOME`, else `~/.local/state`: the journal and the workspaces go under it, apart. */
const stateBase = (env: NodeJS.ProcessEnv, home: string): string =>
  env.XDG_STATE_HOME?.startsWith("/") ? env.XDG_STATE_HOME : join(home, ".local/state");

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number | string {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : `${name} must be a positive integer`;
}

export function readSettings(
  env: NodeJS.ProcessEnv,
  home: string,
  probe: (user: SandboxUser | null, seccomp: Uint8Array | null) => BwrapProbe = probeBwrap,
): SettingsResult {
  const host = env.RUNNER_HOST || "127.0.0.1";
  const tokens = (env.RUNNER_TOKENS ?? DEV_RUNNER_TOKEN)
    .split(",")
    .map((token) => token.trim())
    .filter(Boolean);
  if (tokens.length === 0) return { ok: false, error: "RUNNER_TOKENS names no token" };
  // Like exec-inbox's .dev.vars.example secrets: a published token may only guard loopback.
  if (tokens.includes(DEV_RUNNER_TOKEN) && !isLoopback(host)) {
    return {
      ok: false,
      error: `refusing to listen on ${host} with the development token "${DEV_RUNNER_TOKEN}": set RUNNER_TOKENS to your own secret tokens, or bind to 127.0.0.1`,
    };
  }
  const childEnvNames = (env.RUNNER_CHILD_ENV ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const badName = childEnvNames.find(
    (name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || name.startsWith("RUNNER_"),
  );
  if (badName !== undefined) {
    return {
      ok: false,
      error: `RUNNER_CHILD_ENV may not pass "${badName}" (not a variable name, or a runner setting)`,
    };
  }
  const numbers = {
    port: positiveInt(env, "RUNNER_PORT", 8788),
    retentionMs: positiveInt(env, "RUNNER_RETENTION_MS", HOUR),
    killGraceMs: positiveInt(env, "RUNNER_KILL_GRACE_MS", 2000),
    callbackGiveUpMs: positiveInt(env, "RUNNER_CALLBACK_GIVE_UP_MS", 24 * HOUR),
    maxFullOutputBytes: positiveInt(
      env,
      "RUNNER_MAX_FULL_OUTPUT_BYTES",
      DEFAULT_MAX_FULL_OUTPUT_BYTES,
    ),
    partBytes: positiveInt(env, "RUNNER_OUTPUT_PART_BYTES", DEFAULT_PART_BYTES),
  };
  if (typeof numbers.partBytes === "number" && numbers.partBytes > MAX_PART_BYTES) {
    return { ok: false, error: `RUNNER_OUTPUT_PART_BYTES is at most ${MAX_PART_BYTES}` };
  }
  const invalid = Object.values(numbers).find((value) => typeof value === "string");
  if (typeof invalid === "string") return { ok: false, error: invalid };
  const sandbox = readSandboxSettings(
    env,
    stateBase(env, home),
    isLoopback(host),
    probe,
    buildSeccompFilter,
  );
  if (!sandbox.ok) return sandbox;
  return {
    ok: true,
    settings: {
      host,
      tokens,
      stateDir: env.RUNNER_STATE_DIR || join(stateBase(env, home), "exec-inbox-runner"),
      childEnvNames,
      ...(numbers as Record<keyof typeof numbers, number>),
      sandbox: sandbox.sandbox,
    },
  };
}
