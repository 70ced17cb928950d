// `npm run demo -- --agent`: the same loop as `npm run demo`, driven by an agent through the example
// agent host (agent/) instead of a script: an AI SDK agent, or with `--kit openai-agents` an OpenAI
// Agents JS one (openai-agents/). Both use scripted models (no API key). Exits non-zero on failure.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  DEFAULT_SYSTEM,
  type ExampleHost,
  type ExampleHostOptions,
  scriptedModel,
  startExampleHost,
} from "@exec-inbox/ai-sdk";
import { ExecInboxClient } from "@exec-inbox/client";
import { itemText, openAiAgentsTurn, ScriptedAgentsModel } from "@exec-inbox/openai-agents";
import { Agent, type AgentInputItem, setTracingDisabled } from "@openai/agents";
import type { ModelMessage } from "ai";
import {
  AGENT_TOKEN,
  devVar,
  freePort,
  startWranglerDev,
  type WranglerDev,
} from "../test/support/local-stack";
import {
  DEMO_COMMAND,
  DEMO_RUNNER_TOKEN,
  type DemoRunner,
  startDemoRunner,
  step,
} from "./lib/demo-stack";
import { agentsReads, aiSdkReads, printReads } from "./lib/model-reads";

type HostSettings = Omit<ExampleHostOptions, "model" | "turn" | "system" | "maxSteps">;

/** One kit's demo host: how it starts, its last answer, and how often its model saw a runtime message. */
interface DemoKit {
  readonly label: string;
  start(settings: HostSettings): Promise<{
    host: ExampleHost<unknown>;
    lastAnswer: (sessionId: string) => Promise<string>;
    /** Runtime messages in the input of the model's call that read the result. */
    runtimeSeen: () => number;
    /** The texts the model read since this was last asked, each as the model was given it. */
    newReads: () => string[];
  }>;
}

const aiSdk: DemoKit = {
  label: "AI SDK agent, scripted mock model",
  async start(settings) {
    const model = scriptedModel();
    const host = await startExampleHost<ModelMessage>({ ...settings, model: () => model });
    const reads = aiSdkReads();
    return {
      host: host as ExampleHost<unknown>,
      async lastAnswer(sessionId) {
        const record = await host.kit.conversation(sessionId);
        const message = record?.messages.filter((m) => m.role === "assistant").at(-1);
        if (message === undefined) return "";
        if (typeof message.content === "string") return message.content;
        return message.content
          .flatMap((part) => (part.type === "text" ? [part.text] : []))
          .join("");
      },
      runtimeSeen: () =>
        (model.doGenerateCalls.at(-2)?.prompt ?? []).filter(
          (m) => m.role === "user" && JSON.stringify(m.content).includes("[runtime]"),
        ).length,
      newReads: () => reads(model.doGenerateCalls.map((call) => call.prompt as ModelMessage[])),
    };
  },
};

const openAiAgents: DemoKit = {
  label: "OpenAI Agents JS agent, scripted model",
  async start(settings) {
    // No traces leave the machine: the demo has no OpenAI key.
    setTracingDisabled(true);
    const model = new ScriptedAgentsModel();
    const reads = agentsReads(DEFAULT_SYSTEM);
    const host = await startExampleHost<AgentInputItem>({
      ...settings,
      turn: openAiAgentsTurn({
        agent: () => new Agent({ name: "shell", instructions: DEFAULT_SYSTEM, model }),
      }),
    });
    return {
      host: host as ExampleHost<unknown>,
      async lastAnswer(sessionId) {
        const record = await host.kit.conversation(sessionId);
        const answers = (record?.messages ?? []).filter(
          (item) => "role" in item && item.role === "assistant",
        );
        return answers.length === 0 ? "" : itemText(answers.at(-1) as AgentInputItem);
      },
      runtimeSeen: () =>
        (model.inputs.at(-2) ?? []).filter((item) => itemText(item).startsWith("[runtime]")).length,
      newReads: () => reads(model.inputs),
    };
  },
};

export const DEMO_KITS: Readonly<Record<string, DemoKit>> = {
  "ai-sdk": aiSdk,
  "openai-agents": openAiAgents,
};

export async function agentDemo(kitName = "ai-sdk"): Promise<void> {
  const kitDemo = DEMO_KITS[kitName];
  if (kitDemo === undefined) {
    const kits = [...Object.keys(DEMO_KITS), "agents-sdk"].join(", ");
    throw new Error(`--kit ${kitName}: choose one of ${kits}`);
  }
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-agent-demo-"));
  let dev: WranglerDev | undefined;
  let runner: DemoRunner | undefined;
  let host: ExampleHost<unknown> | undefined;
  try {
    dev = await startWranglerDev(join(stateDir, "exec-inbox"), "any");
    step("exec-inbox up (wrangler dev, local state)", dev.base);
    runner = startDemoRunner(stateDir, await freePort());
    const started = await kitDemo.start({
      execInboxUrl: dev.base,
      agentToken: AGENT_TOKEN,
      resumeSigningSecret: devVar("RESUME_SIGNING_SECRET"),
      runnerUrl: runner.base,
      runnerToken: DEMO_RUNNER_TOKEN,
      stateDir: join(stateDir, "agent"),
      port: await freePort(),
      log: (line) => step("agent host", line),
    });
    host = started.host;
    step(`agent host up (${kitDemo.label})`, host.url);

    const { kit } = host;
    const inbox = new ExecInboxClient({ baseUrl: dev.base, token: AGENT_TOKEN });
    const sessionId = `agent-demo-${Date.now()}`;
    await kit.createSession(sessionId);
    step("session created", sessionId);
    const answer = await kit.sendUserMessage(sessionId, `run: ${DEMO_COMMAND}`);
    step("the model called exec_command; its turn ended", answer);
    printReads(started.newReads());
    const suspended = await inbox.getSession(sessionId);
    step(
      "session suspended by the kit",
      `status=${suspended.status}, waiting_for_bash=${suspended.waiting_for_bash?.handles}`,
    );
    if (suspended.status !== "suspended")
      throw new Error(`expected suspended, got ${suspended.status}`);

    const deadline = Date.now() + 30_000;
    while (!(await started.lastAnswer(sessionId)).includes("inbox-result")) {
      if (Date.now() > deadline) throw new Error("the agent never answered with the output");
      await sleep(100);
    }
    await kit.settled(sessionId);
    const [delivery, ...more] = kit.deliveries;
    if (delivery === undefined || more.length > 0)
      throw new Error(`expected one resume, got ${kit.deliveries.length}`);
    step(
      "signed resume webhook verified by the kit",
      `resume_id=${delivery.resumeId} reason=${delivery.reason}`,
    );
    const runtime = started.runtimeSeen();
    step("the resumed model was given the runtime message", `${runtime} time(s)`);
    step("the model read it with write_stdin and answered", await started.lastAnswer(sessionId));
    printReads(started.newReads());
    const final = await inbox.getSession(sessionId);
    step("acked and finished", `status=${final.status}, inbox pending=${final.inbox.pending}`);
    if (final.status !== "idle" || runtime !== 1) throw new Error("unexpected end state");
    step(
      `agent demo passed: one agent (${kitName}) woken exactly once by a real background process`,
    );
  } finally {
    await host?.close();
    await runner?.close();
    await dev?.stop();
    rmSync(stateDir, { recursive: true, force: true });
    step("everything shut down");
  }
}
