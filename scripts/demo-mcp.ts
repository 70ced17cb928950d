// `npm run demo -- --mcp`: the whole loop through the session's MCP endpoint — the official MCP
// SDK client calls exec_command and write_stdin; exec-inbox (wrangler dev) reserves the job and
// arms the reference runner's callback itself; the agent host is woken once by the result.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExecInboxClient, verifyResume } from "@exec-inbox/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  devVar,
  freePort,
  startAgentHost,
  startWranglerDev,
  type WranglerDev,
  waitFor,
} from "../test/support/local-stack";
import {
  DEMO_COMMAND,
  DEMO_RUNNER_TOKEN,
  type DemoRunner,
  startDemoRunner,
  step,
} from "./lib/demo-stack";

const textOf = (result: object): string =>
  (("content" in result ? (result.content as { text?: string }[]) : [])[0]?.text ?? "").trim();

export async function mcpDemo(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-demo-mcp-"));
  let dev: WranglerDev | undefined;
  let runner: DemoRunner | undefined;
  let host: Awaited<ReturnType<typeof startAgentHost>> | undefined;
  let client: Client | undefined;
  try {
    dev = await startWranglerDev(join(stateDir, "exec-inbox"), "any", {
      RESUME_URL_ALLOWLIST: "http://127.0.0.1:*",
      RUNNER_URL_ALLOWLIST: "http://127.0.0.1:*",
    });
    step("exec-inbox up (wrangler dev, local state)", dev.base);
    runner = startDemoRunner(stateDir, await freePort());
    host = await startAgentHost();
    step("agent host up", host.url);

    const token = devVar("AGENT_TOKENS").split(",")[0] ?? "";
    const inbox = new ExecInboxClient({ baseUrl: dev.base, token });
    const sessionId = `demo-mcp-${Date.now()}`;
    await inbox.createSession({
      id: sessionId,
      resume_url: host.url,
      runner: { url: runner.base, token: DEMO_RUNNER_TOKEN },
    });
    step("session created, naming its runner", sessionId);

    client = new Client({ name: "exec-inbox-demo", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${dev.base}/v1/sessions/${sessionId}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const { tools } = await client.listTools();
    step("MCP client connected", `tools: ${tools.map((tool) => tool.name).join(", ")}`);

    const run = await inbox.registerRun(sessionId);
    const started = await client.callTool({
      name: "exec_command",
      arguments: { cmd: DEMO_COMMAND, yield_time_ms: 250 },
    });
    const { session_id: handle, will_wake } = started.structuredContent as {
      session_id?: string;
      will_wake?: boolean;
    };
    if (handle === undefined) throw new Error("the command did not go to the background");
    step(
      "exec_command over MCP: in the background, job reserved and armed",
      `session_id=${handle} will_wake=${will_wake}`,
    );

    await inbox.suspend(sessionId, run.run_id, { waiting_for: [handle] });
    step("turn ended: run suspended on the command");

    const delivery = await waitFor(() => host?.received[0], 30_000);
    const resume = await verifyResume(
      new Request(host.url, { method: "POST", headers: delivery.headers, body: delivery.body }),
      devVar("RESUME_SIGNING_SECRET"),
    );
    step("signed resume webhook received and verified", `resume_id=${resume.resume_id}`);

    const resumed = await inbox.registerRun(sessionId, { resume_id: resume.resume_id });
    const { claims } = await inbox.claim(sessionId);
    const claim = claims[0];
    if (claim === undefined) throw new Error("no inbox item");
    console.log(
      `\n--- provider message (hidden from UI) ---\n${claim.provider_message.content}\n---\n`,
    );

    const pulled = await client.callTool({
      name: "write_stdin",
      arguments: { session_id: handle },
    });
    step("write_stdin over MCP, from the stored result", JSON.stringify(textOf(pulled)));
    if (textOf(pulled) !== "exited with code 7\ninbox-result") throw new Error("unexpected result");

    await inbox.ack(sessionId, { ids: [claim.envelope.id] });
    await inbox.finishRun(sessionId, resumed.run_id);
    const final = await inbox.getSession(sessionId);
    if (final.status !== "idle") throw new Error(`expected idle, got ${final.status}`);
    if (host.received.length !== 1)
      throw new Error(`expected one resume, got ${host.received.length}`);
    step("mcp demo passed: started over MCP, woken exactly once");
  } finally {
    await client?.close();
    await runner?.close();
    await host?.close();
    await dev?.stop();
    rmSync(stateDir, { recursive: true, force: true });
    step("everything shut down");
  }
}
