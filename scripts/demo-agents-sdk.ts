// `npm run demo -- --kit agents-sdk`: the loop of `npm run demo`, driven by the Agents SDK kit's example
// agent (agents-sdk/example, scripted model) in its own `wrangler dev` beside exec-inbox's, woken
// through a service binding — no webhook, no signature.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ExecInboxClient } from "@exec-inbox/client";
import type { ModelMessage } from "ai";
import { AGENT_TOKEN, freePort } from "../test/support/local-stack";
import { SHELL_AGENT, startTwoWorkers, type TwoWorkers } from "../test/support/two-workers";
import {
  DEMO_COMMAND,
  DEMO_RUNNER_TOKEN,
  type DemoRunner,
  startDemoRunner,
  step,
} from "./lib/demo-stack";
import { aiSdkReads, printReads } from "./lib/model-reads";

export async function agentsSdkDemo(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-sdk-demo-"));
  let runner: DemoRunner | undefined;
  let workers: TwoWorkers | undefined;
  try {
    runner = startDemoRunner(stateDir, await freePort());
    workers = await startTwoWorkers({
      ...SHELL_AGENT,
      vars: {
        EXEC_INBOX_TOKEN: AGENT_TOKEN,
        RUNNER_URL: runner.base,
        RUNNER_TOKEN: DEMO_RUNNER_TOKEN,
      },
    });
    step(
      "exec-inbox and the agent Worker up (two wrangler dev, bound both ways)",
      workers.agent.base,
    );
    const inbox = new ExecInboxClient({ baseUrl: workers.execInbox.base, token: AGENT_TOKEN });
    const sessionId = `sdk-demo-${Date.now()}`;
    await inbox.createSession({ id: sessionId, resume_binding: "SHELL_AGENT_WAKE" });
    step("session created, woken through the binding", sessionId);
    const agentUrl = `${workers.agent.base}/agents/${sessionId}`;
    const reads = aiSdkReads();
    const newReads = async () =>
      reads(
        ((await (await fetch(`${agentUrl}/prompts`)).json()) as { prompts: ModelMessage[][] })
          .prompts,
      );
    const answer = await fetch(`${agentUrl}/prompt`, {
      method: "POST",
      body: JSON.stringify({ text: `run: ${DEMO_COMMAND}` }),
    });
    step("the agent called exec_command; its turn ended", JSON.stringify(await answer.json()));
    printReads(await newReads());
    step("session", `status=${(await inbox.getSession(sessionId)).status}`);
    const deadline = Date.now() + 30_000;
    let messages: Array<{ role: string; content: unknown }> = [];
    for (;;) {
      messages = ((await (await fetch(`${agentUrl}/transcript`)).json()) as { messages: [] })
        .messages;
      // The runtime message names the output too: wait for the model's own answer after it.
      const last = messages.at(-1);
      if (last?.role === "assistant" && JSON.stringify(last.content).includes("inbox-result"))
        break;
      if (Date.now() > deadline) throw new Error("the agent never answered with the output");
      await sleep(100);
    }
    const final = await inbox.getSession(sessionId);
    step(
      "one wake through the binding",
      `resume_id=${final.resume?.resume_id} attempts=${final.resume?.attempts}`,
    );
    const runtime = messages.filter((m) => JSON.stringify(m.content).includes("[runtime]"));
    step("the runtime message is in the agent's own SQLite", `${runtime.length} time(s)`);
    step(
      "the agent read it with write_stdin and answered",
      JSON.stringify(messages.at(-1)?.content),
    );
    printReads(await newReads());
    let settled = await inbox.getSession(sessionId);
    while (settled.status !== "idle" && Date.now() < deadline) {
      await sleep(100);
      settled = await inbox.getSession(sessionId);
    }
    step("acked and finished", `status=${settled.status}, inbox pending=${settled.inbox.pending}`);
    if (settled.status !== "idle") throw new Error(`expected idle, got ${settled.status}`);
    if (runtime.length !== 1) throw new Error("unexpected end state");
    step("agents-sdk demo passed: an Agents SDK agent woken exactly once through its binding");
  } finally {
    await workers?.close();
    await runner?.close();
    rmSync(stateDir, { recursive: true, force: true });
    step("everything shut down");
  }
}
