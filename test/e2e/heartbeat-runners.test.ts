// Both heartbeating runners against the real exec-inbox (`wrangler dev`) with real commands: the
// third-party runner of docs/api.md (docs/examples/third-party-runner.ts) and the reference runner.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runJob } from "../../docs/examples/third-party-runner";
import { Runner } from "../../runner/src/runner";
import { agentClient, startWranglerDev, type WranglerDev } from "../support/local-stack";

const root = mkdtempSync(join(tmpdir(), "third-party-runner-"));
let dev: WranglerDev;
beforeAll(async () => {
  dev = await startWranglerDev(join(root, "state"), "any");
});
afterAll(async () => {
  await dev?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Polls the pull until the job shows `progress` whose tail passes `accept`. */
async function progressOf(sid: string, handle: string, accept: (tail: string) => boolean) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const job = await agentClient(dev.base).getJob(sid, handle);
    if (job.progress !== null && accept(job.progress.output_tail)) return job.progress;
    if (Date.now() > deadline) throw new Error(`no progress: ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Polls the pull until the job has a result. */
async function settled(sid: string, handle: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const job = await agentClient(dev.base).getJob(sid, handle);
    if (job.status !== "running" || Date.now() > deadline) return job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.concurrent("heartbeating runners against wrangler dev", () => {
  it("the third-party runner of docs/api.md heartbeats its command's progress onto the job, posts the result, and ends the command when the agent cancels", async () => {
    const inbox = agentClient(dev.base);
    const sid = `third-party-${Date.now()}`;
    await inbox.createSession({ id: sid });
    // 6 s timeout: a heartbeat every 2 s.
    const reserve = (handle: string, command: string) =>
      inbox.reserveJob(sid, { handle, command, heartbeat_timeout_ms: 6000 });
    const finishing = "printf started; sleep 2.6; printf ' finished'; exit 3";
    const waiting = "printf waiting; sleep 60";
    const [done, cancelled] = await Promise.all([
      reserve("done", finishing),
      reserve("cancelled", waiting),
    ]);
    const results = Promise.all([
      runJob(done.callback, finishing),
      runJob(cancelled.callback, waiting),
    ]);

    expect(await progressOf(sid, "done", (tail) => tail === "started")).toMatchObject({
      output_bytes_total: 7,
    });
    await progressOf(sid, "cancelled", (tail) => tail === "waiting");
    expect(await inbox.cancelJob(sid, "cancelled")).toEqual({ cancel_requested: true });

    const outcomes = await results;
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(["delivered", "delivered"]);
    expect(await inbox.getJob(sid, "done")).toMatchObject({
      status: "completed",
      exit_code: 3,
      output: "started finished",
      ended_by: "process",
      progress: null,
    });
    expect(await inbox.getJob(sid, "cancelled")).toMatchObject({
      status: "killed",
      exit_code: null,
      output: "waiting",
      ended_by: "kill_request",
    });
  });

  it("the reference runner, armed with the reservation's callback whole, heartbeats its progress onto the job and ends the command when the agent cancels", async () => {
    const inbox = agentClient(dev.base);
    const sid = `reference-runner-${Date.now()}`;
    await inbox.createSession({ id: sid });
    const runner = new Runner({ stateDir: join(root, "runner"), log: () => {} });
    const started = await runner.table.execCommand({
      cmd: "printf working; sleep 60",
      yield_time_ms: 250,
    });
    const handle = started.session_id!;
    const { callback } = await inbox.reserveJob(sid, {
      handle,
      command: "work",
      heartbeat_timeout_ms: 6000,
    });
    const { url, token, ...liveness } = callback;
    runner.arm(handle, url, token, liveness);
    expect(await progressOf(sid, handle, (tail) => tail === "working")).toMatchObject({
      output_bytes_total: 7,
    });
    await inbox.cancelJob(sid, handle);
    expect(await settled(sid, handle)).toMatchObject({
      status: "killed",
      output: "working",
      ended_by: "kill_request",
      progress: null,
    });
    await runner.close(0);
  });

  it("docs/api.md shows the example exactly as this test runs it", () => {
    const doc = readFileSync("docs/api.md", "utf8");
    const marker = "<!-- example: docs/examples/third-party-runner.ts -->\n```ts\n";
    const start = doc.indexOf(marker);
    expect(start).toBeGreaterThan(0);
    const shown = doc.slice(start + marker.length, doc.indexOf("```", start + marker.length));
    expect(shown).toBe(readFileSync("docs/examples/third-party-runner.ts", "utf8"));
  });
});
