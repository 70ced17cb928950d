// `npm run agent`: the example agent host. With OPENAI_API_KEY it runs an OpenAI model; without, a
// scripted model (the AI SDK's mock model). Settings come from the environment (see README).
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModel } from "ai";
import { scriptedModel, startExampleHost } from "../src/agent";
import { AGENT_TOKEN, devVar } from "./lib/local-stack";

const env = process.env;
const apiKey = env.OPENAI_API_KEY ?? "";
const modelName = env.OPENAI_MODEL || "gpt-4.1-mini";
const models = new Map<string, LanguageModel>();

function model(sessionId: string): LanguageModel {
  let agent = models.get(sessionId);
  if (agent === undefined) {
    agent =
      apiKey === ""
        ? scriptedModel()
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
  resumeSigningSecret: env.RESUME_SIGNING_SECRET || devVar("RESUME_SIGNING_SECRET"),
  runnerUrl: env.RUNNER_URL || "http://127.0.0.1:8788",
  runnerToken: env.RUNNER_TOKEN || "dev-runner-token",
  stateDir: env.AGENT_STATE_DIR || ".agent-state",
  port: Number(env.AGENT_PORT || 8789),
  model,
  log: (line) => console.log(`[agent] ${line}`),
});
console.log(
  `[agent] listening on ${host.url} with ${apiKey === "" ? "the scripted model (no OPENAI_API_KEY)" : `OpenAI ${modelName}`}`,
);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void host.close().then(() => process.exit(0));
  });
}
