// `npm run agent`: the example agent host. With OPENAI_API_KEY it runs an OpenAI model; without, a
// scripted model (the AI SDK's mock model). Settings come from the environment (see README).
// package.json runs it as `exec node --import tsx` so that npm's SIGINT and SIGTERM reach it (see
// runner/main.ts).
import { appendFileSync } from "node:fs";
import { createOpenAI } from "@ai-sdk/openai";
import { scriptedModel, startExampleHost } from "@exec-inbox/ai-sdk";
import type { LanguageModel } from "ai";
import { AGENT_TOKEN, devVar } from "../test/support/local-stack";

const env = process.env;
const apiKey = env.OPENAI_API_KEY ?? "";
const modelName = env.OPENAI_MODEL || "gpt-4.1-mini";
const models = new Map<string, LanguageModel>();

/**
 * Crash injection for tests: AGENT_KILL_AT_PROMPT=N makes the process SIGKILL itself when the
 * scripted model is given its Nth prompt: the tool calls of the steps before it ran, and the turn
 * that made them is not stored.
 */
const killAtPrompt = Number(env.AGENT_KILL_AT_PROMPT || 0);
let prompts = 0;

/** With AGENT_PROMPT_LOG, the scripted model appends each prompt it is given (JSON lines). */
function logPrompt(sessionId: string) {
  const file = env.AGENT_PROMPT_LOG;
  return (prompt: unknown) => {
    if (file) appendFileSync(file, `${JSON.stringify({ pid: process.pid, sessionId, prompt })}\n`);
    prompts++;
    if (prompts === killAtPrompt) process.kill(process.pid, "SIGKILL");
  };
}

/**
 * Crash injection for tests: AGENT_KILL_AFTER_STORE=N makes the process SIGKILL itself right after
 * its Nth stored turn, before that turn's ack.
 */
function killAfterStore(): (() => void) | undefined {
  const limit = Number(env.AGENT_KILL_AFTER_STORE || 0);
  let stored = 0;
  if (limit <= 0) return undefined;
  return () => {
    stored++;
    if (stored === limit) process.kill(process.pid, "SIGKILL");
  };
}

function model(sessionId: string): LanguageModel {
  let agent = models.get(sessionId);
  if (agent === undefined) {
    agent =
      apiKey === ""
        ? scriptedModel(logPrompt(sessionId))
        : createOpenAI({
            apiKey,
            ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
          })(modelName);
    models.set(sessionId, agent);
  }
  return agent;
}

const host = await startExampleHost({
  execInboxUrl: env.EXEC_INBOX_URL || "http://127.0.0.1:8787",
  agentToken: env.EXEC_INBOX_TOKEN || AGENT_TOKEN,
  // The tenant of that token: resumes signed for another tenant are refused.
  ...(env.EXEC_INBOX_TENANT ? { tenant: env.EXEC_INBOX_TENANT } : {}),
  // Liveness for every background job (unset: the deployment's HEARTBEAT_TIMEOUT_MS applies).
  // A typo must not become "no liveness": the kit refuses a value that is not a number in range.
  ...(env.EXEC_INBOX_HEARTBEAT_TIMEOUT_MS
    ? { heartbeatTimeoutMs: Number(env.EXEC_INBOX_HEARTBEAT_TIMEOUT_MS.trim()) }
    : {}),
  resumeSigningSecret: env.RESUME_SIGNING_SECRET || devVar("RESUME_SIGNING_SECRET"),
  runnerUrl: env.RUNNER_URL || "http://127.0.0.1:8788",
  runnerToken: env.RUNNER_TOKEN || "dev-runner-token",
  stateDir: env.AGENT_STATE_DIR || ".agent-state",
  port: Number(env.AGENT_PORT || 8789),
  ...(env.AGENT_LEASE_MS ? { leaseMs: Number(env.AGENT_LEASE_MS) } : {}),
  afterStore: killAfterStore(),
  model,
  log: (line) => console.log(`[agent] ${line}`),
});
console.log(
  `[agent] listening on ${host.url} with ${apiKey === "" ? "the scripted model (no OPENAI_API_KEY)" : `OpenAI ${modelName}`}`,
);

/** A request still running (a model turn) keeps the host no longer: the kit recovers its run. */
const STOP_DEADLINE_MS = 10_000;

/** Ends the host by `signal`, as an unhandled one would have: its parent sees how it stopped. */
function endBy(signal: NodeJS.Signals): void {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => endBy(signal), STOP_DEADLINE_MS).unref();
    void host.close().then(() => endBy(signal));
  });
}
