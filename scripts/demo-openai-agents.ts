// `npm run demo -- --openai-agents`: the loop of `npm run demo`, driven by an OpenAI Agents JS agent
// (openai-agents/, scripted model) behind a real HTTP server taking the signed webhook.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { getRequestListener } from "@hono/node-server";
import { RunnerClient } from "../agent/runner-client";
import { ExecInboxClient } from "../client";
import { OpenAIAgentsHost, ScriptedAgentsModel } from "../openai-agents";
import {
  AGENT_TOKEN,
  devVar,
  freePort,
  listenLocally,
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

export async function openaiAgentsDemo(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-openai-demo-"));
  let dev: WranglerDev | undefined;
  let runner: DemoRunner | undefined;
  const server = createServer();
  try {
    dev = await startWranglerDev(join(stateDir, "exec-inbox"), "any");
    step("exec-inbox up (wrangler dev, local state)", dev.base);
    runner = startDemoRunner(stateDir, await freePort());
    const inbox = new ExecInboxClient({ baseUrl: dev.base, token: AGENT_TOKEN });
    const model = new ScriptedAgentsModel();
    const host = new OpenAIAgentsHost({
      inbox,
      runner: new RunnerClient({ baseUrl: runner.base, token: DEMO_RUNNER_TOKEN }),
      model: () => model,
      resumeSigningSecret: devVar("RESUME_SIGNING_SECRET"),
      stateDir: join(stateDir, "host"),
    });
    server.on(
      "request",
      getRequestListener((request) => host.handleResume(request)),
    );
    const hook = `http://127.0.0.1:${await listenLocally(server)}/resume`;
    step("OpenAI Agents JS host up (scripted model)", hook);
    const sessionId = `openai-demo-${Date.now()}`;
    await inbox.createSession({ id: sessionId, resume_url: hook });
    const answer = await host.prompt(sessionId, `run: ${DEMO_COMMAND}`);
    step("the agent called exec_command; its turn ended", answer);
    step("session", `status=${(await inbox.getSession(sessionId)).status}`);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const record = await host.store.load(sessionId);
      const last = JSON.stringify(record.history.at(-1) ?? "");
      if (record.activeRunId === null && last.includes("inbox-result")) break;
      if (Date.now() > deadline) throw new Error("the agent never answered with the output");
      await sleep(100);
    }
    await host.idle();
    const taken = host.deliveries.filter((delivery) => delivery.outcome === "taken");
    if (taken.length !== 1) throw new Error(`expected one resume, got ${taken.length}`);
    step("signed resume webhook verified, run resumed from its history", taken[0]?.resumeId);
    const record = await host.store.load(sessionId);
    const runtime = record.history.filter((item) => JSON.stringify(item).includes("[runtime]"));
    step("the runtime message is in the history", `${runtime.length} time(s)`);
    step("the agent read it with write_stdin and answered", JSON.stringify(record.history.at(-1)));
    const final = await inbox.getSession(sessionId);
    if (final.status !== "idle" || runtime.length !== 1) throw new Error("unexpected end state");
    step("openai-agents demo passed: an OpenAI Agents JS run resumed exactly once");
  } finally {
    server.closeAllConnections();
    server.close();
    await runner?.close();
    await dev?.stop();
    rmSync(stateDir, { recursive: true, force: true });
    step("everything shut down");
  }
}
