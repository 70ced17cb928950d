// The agent kit's scripts as a user runs them: `npm run agent` as a real process, `npm run demo --
// --agent`, and the Worker bundle, which must not carry the Node-side kit.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { killAllRunners, RUNNER_TOKEN, startRunnerProcess } from "../runner/runner-process";
import {
  freePort,
  runToEnd,
  spawnCollecting,
  startWranglerDev,
  viewWhen,
  waitForHealthy,
} from "../support/local-stack";
import { killTree, processTree, stackDump, stopByPid } from "../support/process-tree";

const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-agent-scripts-"));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe("the agent scripts", () => {
  it("npm run agent serves an agent that runs a background command and answers with its output after the resume", async () => {
    const dev = await startWranglerDev(join(stateDir, "inbox"), "any");
    const runner = await startRunnerProcess(join(stateDir, "runner"));
    const port = await freePort();
    const { child, output } = spawnCollecting("npm", ["run", "--silent", "agent"], {
      EXEC_INBOX_URL: dev.base,
      RUNNER_URL: runner.base,
      RUNNER_TOKEN,
      AGENT_PORT: String(port),
      AGENT_STATE_DIR: join(stateDir, "agent"),
      OPENAI_API_KEY: undefined,
    });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitForHealthy(base, child, output, 30_000);
      expect(output()).toContain("scripted model (no OPENAI_API_KEY)");
      const post = (path: string, body: unknown) =>
        fetch(`${base}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      expect((await post("/sessions", { id: "via-npm-run-agent" })).status).toBe(201);
      const first = await post("/sessions/via-npm-run-agent/messages", {
        content: "run: sleep 1; printf from-the-host; exit 3",
      });
      expect(((await first.json()) as { answer: string }).answer).toMatch(/in the background/);
      const deadline = Date.now() + 30_000;
      let last = "";
      while (!last.includes("from-the-host") && Date.now() < deadline) {
        await sleep(200);
        const record = (await (await fetch(`${base}/sessions/via-npm-run-agent`)).json()) as {
          messages: Array<{ role: string; content: unknown }>;
        };
        last = JSON.stringify(record.messages.at(-1));
      }
      expect(last).toContain("exited with code 3: from-the-host");
      await viewWhen(dev.base, "via-npm-run-agent", (view) => view.status === "idle");
    } finally {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
      await killAllRunners();
      await dev.stop();
    }
  }, 90_000);

  it.each(["SIGINT", "SIGTERM"] as const)(
    "npm run agent, sent %s at the PID npm holds, ends every process of its tree, frees its port and prints no stack",
    async (signal) => {
      const port = await freePort();
      const { child, output, errors } = spawnCollecting("npm", ["run", "agent"], {
        // Nobody answers there: a host starts, and stops, without exec-inbox or a runner.
        EXEC_INBOX_URL: `http://127.0.0.1:${await freePort()}`,
        RUNNER_URL: `http://127.0.0.1:${await freePort()}`,
        AGENT_PORT: String(port),
        AGENT_STATE_DIR: join(stateDir, `agent-${signal}`),
        OPENAI_API_KEY: undefined,
      });
      let tree = processTree(child.pid as number);
      try {
        await waitForHealthy(`http://127.0.0.1:${port}`, child, output, 30_000);
        tree = processTree(child.pid as number);
        expect(tree.map((proc) => proc.command)).toEqual(
          expect.arrayContaining([expect.stringContaining("scripts/agent-host.ts")]),
        );
        const stopped = await stopByPid(child, tree, signal, port, 30_000);
        expect(stopped.left).toEqual([]);
        expect(stopped.portFree).toBe(true);
        expect(stopped.exit).toEqual({ code: null, signal });
        expect(stackDump(errors())).toEqual([]);
      } finally {
        killTree(tree);
      }
    },
    60_000,
  );

  it.each([
    ["the AI SDK kit", []],
    ["the OpenAI Agents JS kit", ["--kit", "openai-agents"]],
  ])(
    "npm run demo -- --agent runs the whole loop through the example host with %s and exits 0",
    async (_kit, flags) => {
      const { code, output } = await runToEnd("npm", [
        "run",
        "--silent",
        "demo",
        "--",
        "--agent",
        ...flags,
      ]);
      expect(output).toMatch(
        /signed resume webhook verified by the kit — resume_id=rs_\w+ reason=background_exec_completed/,
      );
      expect(output).toContain("the resumed model was given the runtime message — 1 time(s)");
      expect(output).toContain("the model read it with write_stdin and answered — Command");
      expect(output).toContain("exited with code 7: inbox-result");
      // Beside the timeline, the exact texts the model read: the tool's note, the runtime message
      // (its first line the outcome), and the write_stdin answer led by the same outcome.
      expect(output).toMatch(/│ model read: user: run: sleep 2; printf inbox-result; exit 7\n/);
      expect(output).toContain(
        "You will get a runtime message when it ends; then read it with write_stdin",
      );
      expect(output).toMatch(
        /│ model read: user: \[runtime\] Background command session_id="\w+": exited with code 7\.\n/,
      );
      expect(output).toMatch(
        /│ model read: write_stdin answered: \{"outcome":"exited with code 7",/,
      );
      expect(output).toContain("agent demo passed");
      expect(code).toBe(0);
    },
    90_000,
  );

  it("npm run demo -- --agent --kit with an unknown kit fails and names the kits", async () => {
    const { code, output } = await runToEnd("npm", [
      "run",
      "--silent",
      "demo",
      "--",
      "--agent",
      "--kit",
      "langchain",
    ]);
    expect(output).toContain("--kit langchain: choose one of ai-sdk, openai-agents, agents-sdk");
    expect(code).toBe(1);
  }, 30_000);

  it("keeps the agent kits, the AI SDK and OpenAI Agents JS out of the Worker bundle", async () => {
    const outdir = join(stateDir, "bundle");
    const { code, output } = await runToEnd("node_modules/.bin/wrangler", [
      "deploy",
      "--dry-run",
      "--outdir",
      outdir,
      "--metafile",
      join(outdir, "meta.json"),
    ]);
    expect(code, output).toBe(0);
    const inputs = Object.keys(JSON.parse(readFileSync(join(outdir, "meta.json"), "utf8")).inputs);
    expect(inputs).toContain("src/index.ts");
    expect(
      inputs.filter((path) =>
        /^(agent|openai-agents)\/|node_modules\/(ai|@ai-sdk|@openai)\//.test(path),
      ),
    ).toEqual([]);
  }, 60_000);
});
