// `npm run demo`: the whole loop on one machine — exec-inbox under wrangler dev, the reference runner,
// and a scripted agent host — printing a timeline. Exits non-zero if any step fails.
// `npm run demo -- --agent` drives it with an AI SDK agent through the example host (demo-agent.ts);
// `-- --kit openai-agents` with an OpenAI Agents JS one through the same host, and
// `-- --kit agents-sdk` with the Agents SDK kit's agent woken by a binding (demo-agents-sdk.ts), and
// `-- --mcp` through the session's MCP endpoint with the MCP SDK's client (demo-mcp.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExecInboxClient, verifyResume } from "@exec-inbox/client";
import {
  devVar,
  freePort,
  startAgentHost,
  startWranglerDev,
  type WranglerDev,
  waitFor,
} from "../test/support/local-stack";
import { callRunner } from "../test/support/runner-client";
import {
  DEMO_COMMAND,
  DEMO_RUNNER_TOKEN,
  type DemoRunner,
  startDemoRunner,
  step,
} from "./lib/demo-stack";

async function runnerCall<T>(base: string, path: string, body: unknown): Promise<T> {
  const answer = await callRunner(base, DEMO_RUNNER_TOKEN, path, body);
  if (answer.status >= 300)
    throw new Error(`runner ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as T;
}

async function main(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-demo-"));
  let dev: WranglerDev | undefined;
  let runner: DemoRunner | undefined;
  let host: Awaited<ReturnType<typeof startAgentHost>> | undefined;
  try {
    dev = await startWranglerDev(join(stateDir, "exec-inbox"), "any", {
      RESUME_URL_ALLOWLIST: "http://127.0.0.1:*",
    });
    step("exec-inbox up (wrangler dev, local state)", dev.base);

    runner = startDemoRunner(stateDir, await freePort());
    const runnerBase = runner.base;

    host = await startAgentHost();
    step("agent host up", host.url);

    const inbox = new ExecInboxClient({
      baseUrl: dev.base,
      token: devVar("AGENT_TOKENS").split(",")[0] ?? "",
    });
    const sessionId = `demo-${Date.now()}`;
    await inbox.createSession({ id: sessionId, resume_url: host.url });
    step("session created", sessionId);
    const firstRun = await inbox.registerRun(sessionId);
    step("run registered", firstRun.run_id);

    const exec = await runnerCall<{ session_id?: string; output: string }>(
      runnerBase,
      "/v1/exec_command",
      {
        cmd: DEMO_COMMAND,
        yield_time_ms: 250,
      },
    );
    if (exec.session_id === undefined) throw new Error("the command did not go to the background");
    const handle = exec.session_id;
    step("exec_command yielded: command runs in the background", `session_id=${handle}`);

    const { callback } = await inbox.reserveJob(sessionId, { handle, command: DEMO_COMMAND });
    step("job reserved", callback.url);
    await runnerCall(runnerBase, `/v1/processes/${handle}/callback`, callback);
    step("runner callback armed");

    const suspended = await inbox.suspend(sessionId, firstRun.run_id, { waiting_for: [handle] });
    step(
      "run suspended",
      `status=${suspended.status}, waiting_for_bash=${suspended.waiting_for_bash?.handles}`,
    );

    const received = host.received;
    const delivery = await waitFor(() => received[0], 30_000);
    const resume = await verifyResume(
      new Request(host.url, { method: "POST", headers: delivery.headers, body: delivery.body }),
      devVar("RESUME_SIGNING_SECRET"),
    );
    step(
      "signed resume webhook received and verified",
      `resume_id=${resume.resume_id} reason=${resume.reason}`,
    );

    const resumedRun = await inbox.registerRun(sessionId, { resume_id: resume.resume_id });
    step("run registered with the resume_id", resumedRun.run_id);
    const { claims } = await inbox.claim(sessionId);
    const claim = claims[0];
    if (claims.length !== 1 || claim === undefined)
      throw new Error(`expected one claim, got ${claims.length}`);
    step(
      "inbox claimed",
      `${claims.length} envelope, instruction=${claim.envelope.body.instruction}`,
    );
    console.log(
      `\n--- provider message (hidden from UI) ---\n${claim.provider_message.content}\n---\n`,
    );

    const pulled = await runnerCall<{ exit_code?: number; output: string }>(
      runnerBase,
      "/v1/write_stdin",
      {
        session_id: handle,
      },
    );
    step(
      "write_stdin pull from the runner",
      `exit_code=${pulled.exit_code} output=${JSON.stringify(pulled.output)}`,
    );
    const job = await inbox.getJob(sessionId, handle);
    step(
      "job pull from exec-inbox",
      `status=${job.status} exit_code=${job.exit_code} output=${JSON.stringify(job.output)}`,
    );
    if (job.exit_code !== 7 || job.output !== "inbox-result")
      throw new Error("unexpected job result");

    await inbox.ack(sessionId, { ids: [claim.envelope.id] });
    await inbox.finishRun(sessionId, resumedRun.run_id);
    const final = await inbox.getSession(sessionId);
    step("acked and finished", `status=${final.status}, inbox pending=${final.inbox.pending}`);
    if (final.status !== "idle") throw new Error(`expected idle, got ${final.status}`);
    if (host.received.length !== 1)
      throw new Error(`expected one resume webhook, got ${host.received.length}`);
    step("demo passed: woken exactly once by a real background process");
  } finally {
    await runner?.close();
    await host?.close();
    await dev?.stop();
    rmSync(stateDir, { recursive: true, force: true });
    step("everything shut down");
  }
}

/** `--kit NAME` (which implies `--agent`); a `--kit` with no name is refused, not defaulted. */
function kitOf(argv: readonly string[]): string | undefined {
  const at = argv.indexOf("--kit");
  if (at < 0) return undefined;
  const name = argv[at + 1];
  if (name === undefined || name.startsWith("--")) throw new Error("--kit needs a name");
  return name;
}

const mode = Promise.resolve().then(() => {
  const kit = kitOf(process.argv);
  if (process.argv.includes("--mcp")) {
    return import("./demo-mcp").then(({ mcpDemo }) => mcpDemo());
  }
  if (kit === "agents-sdk") {
    return import("./demo-agents-sdk").then(({ agentsSdkDemo }) => agentsSdkDemo());
  }
  return process.argv.includes("--agent") || kit !== undefined
    ? import("./demo-agent").then(({ agentDemo }) => agentDemo(kit))
    : main();
});
mode.catch((error: unknown) => {
  step("demo FAILED", error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
