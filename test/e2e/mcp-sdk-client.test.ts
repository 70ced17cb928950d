// The MCP endpoint driven by a client no one here wrote: the official SDK's Client over its
// StreamableHTTPClientTransport, against `wrangler dev` and the real reference runner — the tools,
// a task that outlives a restart of the service, and a cancel the runner carries out.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAllRunners, type RunnerProcess, startRunnerProcess } from "../runner/runner-process";
import {
  AGENT_TOKEN,
  agentClient,
  startWranglerDev,
  type WranglerDev,
  waitFor,
} from "../support/local-stack";
import { RUNNER_TOKEN } from "../support/secrets";

const root = mkdtempSync(join(tmpdir(), "exec-inbox-mcp-"));
const state = join(root, "state");
let dev: WranglerDev;
let runner: RunnerProcess;

beforeAll(async () => {
  [dev, runner] = await Promise.all([
    startWranglerDev(state, "any"),
    startRunnerProcess(join(root, "runner-state")),
  ]);
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  await killAllRunners();
  rmSync(root, { recursive: true, force: true });
});

/** A session of the local service that names the reference runner. */
async function sessionWithRunner(prefix: string): Promise<string> {
  const sid = `${prefix}-${Date.now()}`;
  await agentClient(dev.base).createSession({
    id: sid,
    runner: { url: runner.base, token: RUNNER_TOKEN },
  });
  return sid;
}

/** The SDK's client, connected to the session's endpoint with the agent token. */
async function connect(sid: string): Promise<Client> {
  const client = new Client({ name: "e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(
    new URL(`${dev.base}/v1/sessions/${sid}/mcp`),
    { requestInit: { headers: { authorization: `Bearer ${AGENT_TOKEN}` } } },
  );
  await client.connect(transport);
  return client;
}

const textOf = (result: any): string => result.content[0].text;

describe("the official MCP SDK client against wrangler dev and the reference runner", () => {
  it("lists the tools, runs a command that exits within its yield, and reads a background one with write_stdin", async () => {
    const sid = await sessionWithRunner("mcp-tools");
    const client = await connect(sid);
    expect(client.getServerVersion()?.name).toBe("exec-inbox");
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["exec_command", "write_stdin"]);

    const quick = await client.callTool({
      name: "exec_command",
      arguments: { cmd: "echo hello", yield_time_ms: 5000 },
    });
    expect(textOf(quick)).toBe("exited with code 0\nhello\n");
    expect(quick.isError).toBe(false);

    const started = await client.callTool({
      name: "exec_command",
      arguments: { cmd: "sleep 1; echo late; exit 4", yield_time_ms: 250 },
    });
    const handle = (started.structuredContent as any).session_id as string;
    expect(textOf(started)).toContain(`Process running with session ID ${handle}`);
    expect((await agentClient(dev.base).getJob(sid, handle)).status).toBe("running");
    const finished = await waitFor(async () => {
      const polled = await client.callTool({
        name: "write_stdin",
        arguments: { session_id: handle, yield_time_ms: 1000 },
      });
      return textOf(polled).startsWith("exited") ? polled : undefined;
    }, 30_000);
    expect(textOf(finished).split("\n")[0]).toBe("exited with code 4");
    expect(finished.isError).toBe(true);
    await client.close();
  });

  it("a task's result outlives a restart of wrangler dev and a new client", async () => {
    const sid = await sessionWithRunner("mcp-task");
    const first = await connect(sid);
    const stream = first.experimental.tasks.callToolStream(
      { name: "exec_command", arguments: { cmd: "sleep 3; echo task-done", yield_time_ms: 250 } },
      undefined,
      { task: { ttl: 600_000 } },
    );
    let taskId: string | undefined;
    for await (const message of stream) {
      if (message.type === "taskCreated") {
        taskId = message.task.taskId;
        break;
      }
    }
    expect(taskId).toBeDefined();
    await first.close();

    const port = dev.port;
    await dev.stop();
    dev = await startWranglerDev(state, port);

    const second = await connect(sid);
    const result = await waitFor(async () => {
      const task = await second.experimental.tasks.getTask(taskId as string);
      return task.status === "completed" ? task : undefined;
    }, 60_000);
    expect(result.statusMessage).toBe("exited with code 0");
    const payload = await second.experimental.tasks.getTaskResult(
      taskId as string,
      CallToolResultSchema,
    );
    expect(textOf(payload)).toBe("exited with code 0\ntask-done\n");
    const { tasks } = await second.experimental.tasks.listTasks();
    expect(tasks.map((task) => task.taskId)).toContain(taskId);
    await second.close();
  });

  it("a cancelled task is cancelled at once and its command ends by the runner's kill", async () => {
    const sid = await sessionWithRunner("mcp-cancel");
    const client = await connect(sid);
    const stream = client.experimental.tasks.callToolStream(
      { name: "exec_command", arguments: { cmd: "sleep 300", yield_time_ms: 250 } },
      undefined,
      { task: {} },
    );
    let taskId = "";
    for await (const message of stream) {
      if (message.type === "taskCreated") {
        taskId = message.task.taskId;
        break;
      }
    }
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe("cancelled");
    const { jobs } = await agentClient(dev.base).listJobs(sid);
    const handle = jobs[0]?.handle as string;
    const ended = await waitFor(async () => {
      const job = await agentClient(dev.base).getJob(sid, handle);
      return job.status === "running" ? undefined : job;
    }, 30_000);
    expect(ended).toMatchObject({ status: "killed", ended_by: "kill_request" });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe("cancelled");
    await client.close();
  });
});
