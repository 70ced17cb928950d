import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, startWranglerDev, type WranglerDev, waitFor } from "../support/local-stack";
import { killAllRunners } from "./runner-process";
import { runnerCall, startFakeInbox, startRunnerProcess } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-delivery-"));

async function backgroundJob(base: string, cmd: string) {
  const started = await runnerCall(base, "/v1/exec_command", { cmd, yield_time_ms: 250 });
  return started.body.session_id as string;
}

describe("which answers of exec-inbox end a completion's retries (real runner process)", () => {
  let dev: WranglerDev;
  beforeAll(async () => {
    // A small output limit, so the runner's own head + tail (192 KiB) is over it.
    dev = await startWranglerDev(join(root, "exec-inbox"), "any", {
      MAX_OUTPUT_BYTES: "8192",
    });
  });
  afterAll(async () => {
    await killAllRunners();
    await dev?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("a 413 is answered with a shorter output, and the status and exit code still arrive", async () => {
    const runner = await startRunnerProcess(join(root, "shrink"));
    const handle = await backgroundJob(
      runner.base,
      "sleep 0.5; printf START; head -c 100000 /dev/zero | tr '\\0' x; printf END; exit 3",
    );
    const sid = `shrink-${Date.now()}`;
    const inbox = agentClient(dev.base);
    await inbox.createSession({ id: sid });
    const reserved = await inbox.reserveJob(sid, { handle, command: "big output" });
    const { url, token } = reserved.callback;
    await runnerCall(runner.base, `/v1/processes/${handle}/callback`, { url, token });
    await waitFor(() => (/callback \d+: accepted/.test(runner.log()) ? true : undefined));
    const job = await inbox.getJob(sid, handle);
    expect(job).toMatchObject({
      status: "completed",
      exit_code: 3,
      output_truncated: true,
      output_bytes_total: 100_008,
    });
    expect(job.output.startsWith("START")).toBe(true);
    expect(job.output.endsWith("END")).toBe(true);
    expect(Buffer.byteLength(job.output)).toBeLessThanOrEqual(8192);
    expect(runner.log()).toMatch(/413 payload_too_large; resending with \d+ bytes of output/);
    await runner.stop();
  });

  it("401, 404 and 422 are retried until exec-inbox takes the result", async () => {
    const script = [401, 404, 422];
    const inbox = await startFakeInbox((attempt) => script[attempt - 1] ?? 202);
    const runner = await startRunnerProcess(join(root, "doubtful"));
    const handle = await backgroundJob(runner.base, "sleep 0.3; printf kept");
    await runnerCall(runner.base, `/v1/processes/${handle}/callback`, {
      url: inbox.url(handle),
      token: "callback-token",
    });
    await waitFor(() => (inbox.of(handle).length === 4 ? true : undefined));
    expect(inbox.of(handle).map((attempt) => attempt.status)).toEqual([401, 404, 422, 202]);
    expect(inbox.of(handle)[3]!.body).toMatchObject({ status: "completed", output: "kept" });
    await runner.stop();
    await inbox.close();
  });

  it("409 and 410 end the retries at once: exec-inbox holds a result, or nobody can take one", async () => {
    const inbox = await startFakeInbox((_attempt, path) => (path.includes("/first/") ? 409 : 410));
    const runner = await startRunnerProcess(join(root, "final"));
    for (const name of ["first", "second"]) {
      const handle = await backgroundJob(runner.base, "sleep 0.3");
      await runnerCall(runner.base, `/v1/processes/${handle}/callback`, {
        url: inbox.url(handle).replace("/exec-jobs/", `/${name}/exec-jobs/`),
        token: "callback-token",
      });
    }
    await waitFor(() => (inbox.attempts.length === 2 ? true : undefined));
    await sleep(1500);
    expect(inbox.attempts.map((attempt) => attempt.status).sort()).toEqual([409, 410]);
    await runner.stop();
    await inbox.close();
  });

  it("a refusal that lasts past RUNNER_CALLBACK_GIVE_UP_MS parks the result in dead-letter.jsonl", async () => {
    const inbox = await startFakeInbox(() => 404);
    const stateDir = join(root, "give-up");
    const runner = await startRunnerProcess(stateDir, {
      env: { RUNNER_CALLBACK_GIVE_UP_MS: "1500" },
    });
    const handle = await backgroundJob(runner.base, "sleep 0.3; printf precious; exit 9");
    await runnerCall(runner.base, `/v1/processes/${handle}/callback`, {
      url: inbox.url(handle),
      token: "callback-token",
    });
    await waitFor(() => (/giving up, result parked/.test(runner.log()) ? true : undefined));
    await runner.stop();
    const parked = readFileSync(join(stateDir, "dead-letter.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(parked).toEqual([
      expect.objectContaining({
        sessionId: handle,
        url: inbox.url(handle),
        token: "callback-token",
        reason: "404 scripted_404",
        body: expect.objectContaining({ status: "completed", exit_code: 9, output: "precious" }),
      }),
    ]);
    // Settled: a restart owes nothing for it.
    const attempts = inbox.of(handle).length;
    const again = await startRunnerProcess(stateDir);
    await sleep(800);
    expect(again.log()).not.toContain("recovering");
    expect(inbox.of(handle)).toHaveLength(attempts);
    await again.stop();
    await inbox.close();
  });
});
