// Two `wrangler dev` processes side by side: exec-inbox, bound to the small agent Worker of
// binding-agent/ by a service binding (WAKE_AGENT → its `Agent` entrypoint), and that agent, bound
// back to exec-inbox. They find each other through a dev registry of their own, so other tests'
// Workers of the same names never answer. Each can be stopped and started again on its port.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { endProcessGroup, freePort, spawnCollecting, waitForHealthy } from "./local-stack";
import { WRANGLER_SOURCE_ENV } from "./source-condition";

const ROOT = resolve(import.meta.dirname, "../..");
/** The agent Worker beside exec-inbox: its folder, and the binding exec-inbox wakes it by. */
export interface AgentWorker {
  readonly dir: string;
  readonly service: string;
  readonly entrypoint: string;
  readonly binding: string;
  readonly vars?: Record<string, string>;
}

/** The small agent of binding-agent/ (the default). */
export const BINDING_AGENT: AgentWorker = {
  dir: join(ROOT, "test/support/binding-agent"),
  service: "binding-agent",
  entrypoint: "Agent",
  binding: "WAKE_AGENT",
};

/** The Agents SDK kit's example agent (agents-sdk/example). */
export const SHELL_AGENT: AgentWorker = {
  dir: join(ROOT, "agents-sdk/example"),
  service: "shell-agent",
  entrypoint: "ExecInboxWake",
  binding: "SHELL_AGENT_WAKE",
};
const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");

export interface DevProcess {
  readonly base: string;
  logs(): string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * exec-inbox's own wrangler.toml with the binding a deployment adds (docs/cloudflare-agents.md),
 * written beside the state: its paths made absolute, so it runs from anywhere.
 */
function execInboxConfig(dir: string, agent: AgentWorker): string {
  const config = readFileSync(join(ROOT, "wrangler.toml"), "utf8")
    .replace(/^main = "(.*)"$/m, (_, path) => `main = "${join(ROOT, path)}"`)
    .replace(/^directory = "(.*)"$/m, (_, path) => `directory = "${join(ROOT, path)}"`)
    .replace(/^migrations_dir = "(.*)"$/m, (_, path) => `migrations_dir = "${join(ROOT, path)}"`);
  const file = join(dir, "exec-inbox.toml");
  writeFileSync(
    file,
    `${config}\n[[services]]\nbinding = "${agent.binding}"\nservice = "${agent.service}"\nentrypoint = "${agent.entrypoint}"\n`,
  );
  return file;
}

function devProcess(args: () => string[], cwd: string, registry: string, port: number): DevProcess {
  let running: ReturnType<typeof spawnCollecting> | null = null;
  let logs = "";
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    logs: () => logs + (running?.output() ?? ""),
    async start() {
      const inspector = await freePort();
      running = spawnCollecting(
        WRANGLER,
        [
          "dev",
          "--ip",
          "127.0.0.1",
          "--port",
          String(port),
          "--inspector-port",
          String(inspector),
          ...args(),
        ],
        {
          WRANGLER_REGISTRY_PATH: registry,
          WRANGLER_SEND_METRICS: "false",
          NO_COLOR: "1",
          ...WRANGLER_SOURCE_ENV,
        },
        cwd,
      );
      await waitForHealthy(base, running.child, running.output, 45_000);
    },
    async stop() {
      const child = running?.child;
      if (child === undefined || child.exitCode !== null || child.pid === undefined) return;
      logs += running?.output() ?? "";
      await endProcessGroup(child.pid, "SIGTERM");
      running = null;
    },
  };
}

export interface TwoWorkers {
  readonly execInbox: DevProcess;
  readonly agent: DevProcess;
  close(): Promise<void>;
}

export async function startTwoWorkers(
  agentWorker: AgentWorker = BINDING_AGENT,
  vars: Record<string, string> = {},
): Promise<TwoWorkers> {
  const dir = mkdtempSync(join(tmpdir(), "exec-inbox-binding-"));
  const registry = join(dir, "registry");
  const config = execInboxConfig(dir, agentWorker);
  const execInboxPort = await freePort();
  const allVars = {
    RESUME_BINDING_ALLOWLIST: agentWorker.binding,
    // The agent reaches exec-inbox over its binding (an origin of no port): the callback URLs
    // handed to runners must name exec-inbox's real address.
    PUBLIC_BASE_URL: `http://127.0.0.1:${execInboxPort}`,
    ...vars,
  };
  const execInbox = devProcess(
    () => [
      "-c",
      config,
      "--persist-to",
      join(dir, "exec-inbox-state"),
      "--env-file",
      join(ROOT, ".dev.vars.example"),
      ...Object.entries(allVars).flatMap(([key, value]) => ["--var", `${key}:${value}`]),
    ],
    ROOT,
    registry,
    execInboxPort,
  );
  const agent = devProcess(
    () => [
      "--persist-to",
      join(dir, "agent-state"),
      ...Object.entries(agentWorker.vars ?? {}).flatMap(([key, value]) => [
        "--var",
        `${key}:${value}`,
      ]),
    ],
    agentWorker.dir,
    registry,
    await freePort(),
  );
  await Promise.all([execInbox.start(), agent.start()]);
  return {
    execInbox,
    agent,
    async close() {
      await Promise.all([execInbox.stop(), agent.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
