// `npm run demo -- --agent`: the same loop as `npm run demo`, driven by an AI SDK agent through the
// example agent host (agent/) instead of a script. Exits non-zero if any step fails.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type ExampleHost, type SessionRecord, scriptedModel, startExampleHost } from "../agent";
import { ExecInboxClient } from "../client";
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

function lastAssistantText(record: SessionRecord | undefined): string {
  const message = record?.messages.filter((m) => m.role === "assistant").at(-1);
  if (message === undefined) return "";
  const { content } = message;
  if (typeof content === "string") return content;
  return content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
}

export async function agentDemo(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-agent-demo-"));
  let dev: WranglerDev | undefined;
  let runner: DemoRunner | undefined;
  let host: ExampleHost | undefined;
  try {
    dev = await startWranglerDev(join(stateDir, "exec-inbox"), "any");
    step("exec-inbox up (wrangler dev, local state)", dev.base);
    runner = startDemoRunner(stateDir, await freePort());
    const model = scriptedModel();
    host = await startExampleHost({
      execInboxUrl: dev.base,
      agentToken: AGENT_TOKEN,
      resumeSigningSecret: devVar("RESUME_SIGNING_SECRET"),
      runnerUrl: runner.base,
      runnerToken: DEMO_RUNNER_TOKEN,
      stateDir: join(stateDir, "agent"),
      port: await freePort(),
      model: () => model,
      log: (line) => step("agent host", line),
    });
    step("agent host up (AI SDK agent, scripted mock model)", host.url);

    const { kit } = host;
    const inbox = new ExecInboxClient({ baseUrl: dev.base, token: AGENT_TOKEN });
    const sessionId = `agent-demo-${Date.now()}`;
    await kit.createSession(sessionId);
    step("session created", sessionId);
    const answer = await kit.sendUserMessage(sessionId, `run: ${DEMO_COMMAND}`);
    step("the model called exec_command; its turn ended", answer);
    const suspended = await inbox.getSession(sessionId);
    step(
      "session suspended by the kit",
      `status=${suspended.status}, waiting_for_bash=${suspended.waiting_for_bash?.handles}`,
    );
    if (suspended.status !== "suspended")
      throw new Error(`expected suspended, got ${suspended.status}`);

    const deadline = Date.now() + 30_000;
    while (!lastAssistantText(await kit.conversation(sessionId)).includes("inbox-result")) {
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
    const prompt = model.doGenerateCalls.at(-2)?.prompt ?? [];
    const runtime = prompt.filter(
      (m) => m.role === "user" && JSON.stringify(m.content).includes("[runtime]"),
    );
    step("the resumed model was given the runtime message", `${runtime.length} time(s)`);
    const record = await kit.conversation(sessionId);
    step("the model read it with write_stdin and answered", lastAssistantText(record));
    const final = await inbox.getSession(sessionId);
    step("acked and finished", `status=${final.status}, inbox pending=${final.inbox.pending}`);
    if (final.status !== "idle" || runtime.length !== 1) throw new Error("unexpected end state");
    step("agent demo passed: one AI SDK agent woken exactly once by a real background process");
  } finally {
    await host?.close();
    await runner?.close();
    await dev?.stop();
    rmSync(stateDir, { recursive: true, force: true });
    step("everything shut down");
  }
}
