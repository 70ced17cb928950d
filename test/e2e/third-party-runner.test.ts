// docs/api.md's third-party runner (docs/examples/third-party-runner.ts), run as written against the
// real exec-inbox (`wrangler dev`), with a real command.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runJob } from "../../docs/examples/third-party-runner";
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

describe("the third-party runner of docs/api.md, against wrangler dev", () => {
  it("heartbeats its command's progress onto the job, posts the result, and ends the command when the agent cancels", async () => {
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

  it("docs/api.md shows the example exactly as this test runs it", () => {
    const doc = readFileSync("docs/api.md", "utf8");
    const marker = "<!-- example: docs/examples/third-party-runner.ts -->\n```ts\n";
    const start = doc.indexOf(marker);
    expect(start).toBeGreaterThan(0);
    const shown = doc.slice(start + marker.length, doc.indexOf("```", start + marker.length));
    expect(shown).toBe(readFileSync("docs/examples/third-party-runner.ts", "utf8"));
  });
});
