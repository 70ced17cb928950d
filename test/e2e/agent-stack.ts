// The whole agent loop for tests: real `wrangler dev`, the real runner as a process, and the example
// agent host (in this process) whose per-session models are the AI SDK's mock, scripted.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { SessionRecord } from "@exec-inbox/ai-sdk";
import {
  type ExampleHost,
  type ExampleHostOptions,
  scriptedModel,
  startExampleHost,
} from "@exec-inbox/ai-sdk";
import { ExecInboxClient } from "@exec-inbox/client";
import type { MockLanguageModelV4 } from "ai/test";
import { Webhook } from "standardwebhooks";
import {
  killAllRunners,
  RUNNER_TOKEN,
  type RunnerProcess,
  spawnRunner,
  startRunnerProcess,
} from "../runner/runner-process";
import {
  AGENT_TOKEN,
  api,
  devVar,
  freePort,
  spawnCollecting,
  startWranglerDev,
  type WranglerDev,
  waitForHealthy,
} from "../support/local-stack";
import { NODE_SOURCE_FLAG } from "../support/source-condition";

export const OPERATOR_TOKEN = "dev-operator-token";
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
export const LEASE_MS = 2000;

export interface HostInstance {
  readonly host: ExampleHost;
  /** The mock model of each session of this host instance (a restarted host has new ones). */
  readonly models: Map<string, MockLanguageModelV4>;
}

export interface HostProcess {
  readonly base: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly output: () => string;
  post(path: string, body: unknown): Promise<{ status: number; body: any }>;
  kill(): Promise<void>;
}

export interface AgentStack {
  readonly dev: WranglerDev;
  readonly inbox: ExecInboxClient;
  runner: RunnerProcess;
  readonly stateDir: string;
  readonly hostPort: number;
  /** `execInboxUrl`/`runnerUrl` put a fault proxy between the host and exec-inbox or the runner. */
  startHost(
    options?: Partial<
      Pick<ExampleHostOptions, "afterStore" | "execInboxUrl" | "runnerUrl" | "heartbeatTimeoutMs">
    >,
  ): Promise<HostInstance>;
  /** `npm run agent` as a real process (node, no wrapper) on the stack's host port and store. */
  spawnHostProcess(env?: Record<string, string>): Promise<HostProcess>;
  /** SIGKILL to the runner and its commands, then a new runner on the same port and journal. */
  restartRunner(): Promise<void>;
  /** SIGKILL to the runner now running (the first or a restarted one), with nothing after it. */
  vanishRunner(): Promise<void>;
  events(sessionId: string): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

export async function startAgentStack(): Promise<AgentStack> {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-agent-"));
  const dev = await startWranglerDev(join(stateDir, "inbox"), "any");
  const runnerDir = join(stateDir, "runner");
  const hostPort = await freePort();
  const hosts: ExampleHost[] = [];
  const cleanups: Array<() => Promise<void> | void> = [];
  /** Kills whichever runner process serves the stack's runner port now. */
  let killCurrent: () => Promise<void> = () => stack.runner.kill();
  const stack: AgentStack = {
    dev,
    inbox: new ExecInboxClient({ baseUrl: dev.base, token: AGENT_TOKEN }),
    runner: await startRunnerProcess(runnerDir),
    stateDir,
    hostPort,
    async startHost(options = {}) {
      const models = new Map<string, MockLanguageModelV4>();
      const host = await startExampleHost({
        execInboxUrl: dev.base,
        agentToken: AGENT_TOKEN,
        resumeSigningSecret: devVar("RESUME_SIGNING_SECRET"),
        runnerUrl: stack.runner.base,
        runnerToken: RUNNER_TOKEN,
        stateDir: join(stateDir, "agent"),
        port: hostPort,
        leaseMs: LEASE_MS,
        model: (sessionId) => {
          let model = models.get(sessionId);
          if (model === undefined) {
            model = scriptedModel();
            models.set(sessionId, model);
          }
          return model;
        },
        ...options,
      });
      hosts.push(host);
      return { host, models };
    },
    async spawnHostProcess(env = {}) {
      const { child, output } = spawnCollecting(
        process.execPath,
        [NODE_SOURCE_FLAG, "--import", TSX, join(ROOT, "scripts/agent-host.ts")],
        {
          EXEC_INBOX_URL: dev.base,
          RUNNER_URL: stack.runner.base,
          RUNNER_TOKEN,
          AGENT_PORT: String(hostPort),
          AGENT_STATE_DIR: join(stateDir, "agent"),
          AGENT_LEASE_MS: String(LEASE_MS),
          OPENAI_API_KEY: undefined,
          ...env,
        },
        ROOT,
      );
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
        (resolve) => child.once("exit", (code, signal) => resolve({ code, signal })),
      );
      const kill = async () => {
        if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
          process.kill(-child.pid, "SIGKILL");
        }
        // The next host listens on the same port.
        await exited;
      };
      cleanups.push(kill);
      const base = `http://127.0.0.1:${hostPort}`;
      await waitForHealthy(base, child, output, 30_000);
      return {
        base,
        exited,
        output,
        kill,
        async post(path, body) {
          const response = await fetch(`${base}${path}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          return { status: response.status, body: await response.json() };
        },
      };
    },
    async restartRunner() {
      const port = Number(new URL(stack.runner.base).port);
      await stack.vanishRunner();
      const { child, output } = spawnRunner(runnerDir, port);
      await waitForHealthy(stack.runner.base, child, output, 20_000);
      const exited = new Promise((resolve) => child.once("exit", resolve));
      const kill = async () => {
        if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
        process.kill(-child.pid, "SIGKILL");
        await exited;
      };
      killCurrent = kill;
      cleanups.push(kill);
    },
    vanishRunner: () => killCurrent(),
    async events(sessionId) {
      const path = `/v1/ops/sessions/default/${sessionId}/events?after=0&limit=500`;
      return (await api(dev.base, "GET", path, undefined, OPERATOR_TOKEN)).body.events;
    },
    async close() {
      await Promise.all(hosts.map((host) => host.close()));
      await killAllRunners();
      for (const kill of cleanups) await kill();
      await dev.stop();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
  return stack;
}

type Prompt = MockLanguageModelV4["doGenerateCalls"][number]["prompt"];

/** The text of every user message of a prompt, runtime messages included. */
export function userTexts(prompt: Prompt): string[] {
  return prompt
    .filter((message) => message.role === "user")
    .map((message) =>
      message.content.map((part) => ("text" in part ? (part.text as string) : "")).join(""),
    );
}

/** Every tool call the conversation holds, in order. */
export function toolCalls(record: SessionRecord): Array<{ toolName: string; input: unknown }> {
  return record.messages.flatMap((message) =>
    message.role === "assistant" && Array.isArray(message.content)
      ? message.content.flatMap((part) =>
          part.type === "tool-call" ? [{ toolName: part.toolName, input: part.input }] : [],
        )
      : [],
  );
}

/** Every tool result the conversation holds, in order, as the model was given it. */
export function toolResults(record: SessionRecord): Array<{ toolName: string; value: any }> {
  return record.messages.flatMap((message) =>
    message.role === "tool"
      ? message.content.flatMap((part) =>
          part.type === "tool-result"
            ? [{ toolName: part.toolName, value: (part.output as { value: unknown }).value }]
            : [],
        )
      : [],
  );
}

/** The assistant's texts, in order. */
export function assistantTexts(record: SessionRecord): string[] {
  return record.messages.flatMap((message) => {
    if (message.role !== "assistant") return [];
    if (typeof message.content === "string") return [message.content];
    return message.content.flatMap((part) => (part.type === "text" ? [part.text] : []));
  });
}

/** Polls the stored conversation until `accept` holds. */
export async function conversationWhen(
  instance: HostInstance,
  sessionId: string,
  accept: (record: SessionRecord) => boolean,
  timeoutMs = 30_000,
): Promise<SessionRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = await instance.host.kit.conversation(sessionId);
    if (record !== undefined && accept(record)) return record;
    if (Date.now() > deadline) {
      throw new Error(`conversation never matched: ${JSON.stringify(record?.messages.slice(-3))}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** POSTs `body` to a host's /resume, signed with the deployment's secret as webhook `resumeId`. */
export function postSignedResume(
  hostUrl: string,
  resumeId: string,
  body: string,
): Promise<Response> {
  const at = new Date();
  return fetch(`${hostUrl}/resume`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": resumeId,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(devVar("RESUME_SIGNING_SECRET")).sign(resumeId, at, body),
    },
    body,
  });
}
