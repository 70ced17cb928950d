// The OpenAI Agents JS kit end to end: real wrangler dev, the real runner as a process, and the
// kit's host behind a real HTTP server taking the signed webhook, driven by a scripted model
// (openai-agents/scripted-model.ts). The loop: a long command, suspend, its exit, one resume, the
// model reading the result once and answering; then a replayed webhook that does nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { getRequestListener } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerClient } from "../../agent/runner-client";
import { ExecInboxClient } from "../../client";
import { OpenAIAgentsHost, ScriptedAgentsModel } from "../../openai-agents";
import { RUNNER_TOKEN, type RunnerProcess, startRunnerProcess } from "../runner/runner-process";
import {
  AGENT_TOKEN,
  devVar,
  listenLocally,
  startWranglerDev,
  type WranglerDev,
} from "../support/local-stack";

const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-openai-agents-"));
let dev: WranglerDev;
let runner: RunnerProcess;
let host: OpenAIAgentsHost;
let hookUrl = "";
let closeServer: () => void = () => {};
const models = new Map<string, ScriptedAgentsModel>();
/** Each webhook as it arrived, to replay it byte for byte. */
const raw: Array<{ headers: Record<string, string>; body: string }> = [];

beforeAll(async () => {
  dev = await startWranglerDev(join(stateDir, "inbox"), "any");
  runner = await startRunnerProcess(join(stateDir, "runner"));
  const inbox = new ExecInboxClient({ baseUrl: dev.base, token: AGENT_TOKEN });
  host = new OpenAIAgentsHost({
    inbox,
    runner: new RunnerClient({ baseUrl: runner.base, token: RUNNER_TOKEN }),
    model: (sessionId) => {
      let model = models.get(sessionId);
      if (model === undefined) {
        model = new ScriptedAgentsModel();
        models.set(sessionId, model);
      }
      return model;
    },
    resumeSigningSecret: devVar("RESUME_SIGNING_SECRET"),
    stateDir: join(stateDir, "host"),
    leaseMs: 5000,
  });
  const server = createServer(
    getRequestListener(async (request) => {
      const body = await request.clone().text();
      raw.push({ headers: Object.fromEntries(request.headers), body });
      return host.handleResume(request);
    }),
  );
  hookUrl = `http://127.0.0.1:${await listenLocally(server)}/resume`;
  closeServer = () => {
    server.closeAllConnections();
    server.close();
  };
}, 90_000);

afterAll(async () => {
  closeServer();
  await host?.idle();
  await runner?.kill();
  await dev?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

const inbox = () => new ExecInboxClient({ baseUrl: dev.base, token: AGENT_TOKEN });
const textOf = (item: unknown): string => JSON.stringify(item);
const runtimeItems = (items: unknown[]) =>
  items.filter((item) => textOf(item).includes("[runtime]"));

async function recordWhen(sid: string, done: (last: string) => boolean) {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const record = await host.store.load(sid);
    const last = record.history.at(-1);
    if (record.activeRunId === null && last !== undefined && done(textOf(last))) return record;
  }
  throw new Error(`session ${sid} never got there: ${JSON.stringify(await host.store.load(sid))}`);
}

describe("the OpenAI Agents JS kit on real wrangler dev and the real runner", () => {
  it("suspends on a long command, is resumed once when it exits, reads it with write_stdin and answers", async () => {
    const sid = `oai-loop-${Date.now()}`;
    await inbox().createSession({ id: sid, resume_url: hookUrl });
    const first = await host.prompt(sid, "run: sleep 2; printf oai-result; exit 3");
    expect(first).toMatch(/^Started command \S+ in the background/);
    const [handle] = (await host.store.load(sid)).running;
    expect(await inbox().getSession(sid)).toMatchObject({
      status: "suspended",
      run: null,
      waiting_for_bash: { handles: [handle] },
    });

    const record = await recordWhen(sid, (last) => last.includes("exited with code 3"));
    expect(textOf(record.history.at(-1))).toContain("oai-result");
    expect(runtimeItems(record.history)).toHaveLength(1);
    expect(record.applied).toHaveLength(1);
    const model = models.get(sid)!;
    const shown = model.inputs.filter((input) => runtimeItems(input).length > 0);
    expect(shown.length).toBeGreaterThan(0);
    for (const input of shown) expect(runtimeItems(input)).toHaveLength(1);
    expect(host.deliveries.filter((d) => d.sessionId === sid).map((d) => d.outcome)).toEqual([
      "taken",
    ]);
    await sleep(500);
    expect(await inbox().getSession(sid)).toMatchObject({
      status: "idle",
      run: null,
      inbox: { pending: 0, claimed: 0 },
      resume: { state: "completed", attempts: 1 },
    });
  });

  it("a replayed webhook is answered 200 and does nothing: no run, no model call, no item", async () => {
    const sid = `oai-replay-${Date.now()}`;
    await inbox().createSession({ id: sid, resume_url: hookUrl });
    await host.prompt(sid, "run: sleep 1; printf replayed; exit 0");
    const record = await recordWhen(sid, (last) => last.includes("exited with code 0"));
    const calls = models.get(sid)!.inputs.length;
    const webhook = raw.find((entry) => JSON.parse(entry.body).session_id === sid);
    expect(webhook).toBeDefined();
    const replayed = await fetch(hookUrl, {
      method: "POST",
      headers: webhook!.headers,
      body: webhook!.body,
    });
    expect(replayed.status).toBe(200);
    await host.idle();
    expect(models.get(sid)!.inputs).toHaveLength(calls);
    expect((await host.store.load(sid)).history).toEqual(record.history);
    expect(host.deliveries.filter((d) => d.sessionId === sid).map((d) => d.outcome)).toEqual([
      "taken",
      "duplicate",
    ]);
    expect(await inbox().getSession(sid)).toMatchObject({ status: "idle", run: null });
  });

  it("an unsigned webhook is refused with 401 and changes nothing", async () => {
    const answer = await fetch(hookUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "session.resume", session_id: "nobody" }),
    });
    expect(answer.status).toBe(401);
  });
});
