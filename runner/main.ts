// Starts the reference exec runner: `npm run runner`. Settings come from the environment (settings.ts).
// package.json runs it as `exec node --import tsx`, with no shell and no tsx CLI between npm and the
// runner: the shell dies of npm's SIGTERM without passing it on, and the CLI SIGKILLs a child that
// does not acknowledge a passed-on signal within 30 ms, before it has ended its commands.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { serve } from "@hono/node-server";
import { cgroupRoots, removeRoots } from "./src/cgroup";
import { childEnvironment } from "./src/child-env";
import { Runner } from "./src/runner";
import { runnerApp } from "./src/server";
import { readSettings } from "./src/settings";

const read = readSettings(process.env, homedir());
if (!read.ok) {
  console.error(`[runner] not starting: ${read.error}`);
  process.exit(2);
}
const settings = read.settings;
if (!process.env.RUNNER_STATE_DIR && existsSync(".runner-state/callbacks.jsonl")) {
  // Earlier versions kept the journal here, where commands could read it; owed callbacks stay in it.
  console.error(
    `[runner] warning: ./.runner-state holds an old journal; to resend what it owes, start once with RUNNER_STATE_DIR=.runner-state, then delete it. Journal now in ${settings.stateDir}`,
  );
}
const { sandbox } = settings;
if (sandbox.warning !== null) console.error(`[runner] WARNING: ${sandbox.warning}`);
// Joining a v1 cgroup costs a command an RCU grace period (~10–15 ms here, docs/benchmarks.md).
const cgroups = process.env.RUNNER_CGROUPS === "off" ? { memory: null, pids: null } : cgroupRoots();
const held = [cgroups.memory && "memory", cgroups.pids && "pids"].filter(Boolean).join(" and ");
const who =
  sandbox.user === null
    ? "the runner's own user"
    : `uid ${sandbox.user.uid} gid ${sandbox.user.gid}`;
const filter = sandbox.seccomp === null ? "no seccomp filter" : "a seccomp filter";
console.log(
  `[runner] sandbox ${sandbox.mode}${sandbox.mode === "bwrap" ? ` (network ${sandbox.network}; commands run as ${who}, with ${filter})` : ""}; workspaces in ${sandbox.workRoot}; cgroup limits: ${held || "none (memory falls back to RLIMIT_AS, no pids limit)"}`,
);
const CALLBACK_GRACE_MS = 5000;
const runner = new Runner({
  stateDir: settings.stateDir,
  childEnv: childEnvironment(process.env, settings.childEnvNames),
  killGraceMs: settings.killGraceMs,
  retentionMs: settings.retentionMs,
  callbackGiveUpMs: settings.callbackGiveUpMs,
  maxFullOutputBytes: settings.maxFullOutputBytes,
  partBytes: settings.partBytes,
  launch: { sandbox, cgroups, stateDir: settings.stateDir },
});
runner.recover();

const { host, port } = settings;
const server = serve(
  { fetch: runnerApp(runner, settings.tokens).fetch, port, hostname: host },
  (info) => {
    console.log(`[runner] listening on http://${host}:${info.port}`);
  },
);

/**
 * Ends the runner by `signal` once it has stopped, as an unhandled one would have: its parent (npm,
 * a shell: 128 + the signal's number) sees how it was stopped.
 */
function endBy(signal: NodeJS.Signals): void {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}

let stopping = false;
async function stop(signal: NodeJS.Signals): Promise<void> {
  // A second Ctrl-C must not kill the runner before it has ended its process groups.
  if (stopping) return console.log(`[runner] ${signal}: already stopping`);
  stopping = true;
  console.log(`[runner] ${signal}: ending process groups, then exiting`);
  // Whatever hangs (an unkillable process, a stuck socket), the runner still exits: what is owed
  // is in the journal. Groups get 2 × grace (SIGTERM, SIGKILL, stop waiting on pipes).
  const deadline = 2 * settings.killGraceMs + CALLBACK_GRACE_MS + 2000;
  setTimeout(() => {
    console.error(`[runner] shutdown passed its ${deadline} ms deadline; exiting anyway`);
    process.exit(1);
  }, deadline).unref();
  server.close();
  await runner.close(CALLBACK_GRACE_MS);
  removeRoots(cgroups);
  endBy(signal);
}
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));
