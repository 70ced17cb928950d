import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outputTools } from "@exec-inbox/ai-sdk/output-tools";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AGENT_TOKEN,
  agentClient,
  startWranglerDev,
  type WranglerDev,
} from "../support/local-stack";
import { killAllRunners } from "./runner-process";
import { runnerCall, startRunnerProcess, waitUntil } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-full-output-"));
const MIB = 1024 * 1024;
const SIZE = 200 * MIB;
/** Deterministic and quick (~1 s): the test prints it again to know what the command printed. */
const GENERATOR = `seq 1 30000000 | head -c ${SIZE}`;
/** Longer than the test: no purge may cut the reads below, however busy the machine. */
const RETENTION_MS = 3_600_000;

const shaOf = (pipeline: string): string =>
  execFileSync("sh", ["-c", `${pipeline} | sha256sum`], { encoding: "utf8" }).split(" ")[0]!;

/**
 * The local bucket wrangler dev keeps under its state, opened by a second Miniflare (the same
 * SQLite metadata and blobs): listing it is listing what the Worker's bucket holds.
 */
async function openBucket(stateDir: string) {
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      script: "export default { fetch: () => new Response(null) }",
      r2Buckets: { OUTPUTS: "exec-inbox-outputs" },
      // wrangler dev's persist root: Miniflare keeps the bucket in `r2/` under it.
      resourcePersistencePath: join(stateDir, "v3"),
    }),
  );
  const bucket = await mf.getR2Bucket("OUTPUTS");
  return {
    keys: async (prefix: string) =>
      (await bucket.list({ prefix })).objects.map((object) => object.key),
    close: () => mf.dispose(),
  };
}

const journalParts = (stateDir: string): number =>
  existsSync(join(stateDir, "callbacks.jsonl"))
    ? readFileSync(join(stateDir, "callbacks.jsonl"), "utf8")
        .split("\n")
        .filter((line) => line.includes('"type":"part"')).length
    : 0;

async function hashOfStream(response: Response): Promise<{ sha: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hash.update(value);
    bytes += value.byteLength;
  }
  return { sha: hash.digest("hex"), bytes };
}

describe("a 200 MiB output through a runner that is killed mid-upload (real runner, wrangler dev)", () => {
  let dev: WranglerDev;
  const devState = join(root, "exec-inbox");
  beforeAll(async () => {
    dev = await startWranglerDev(devState, "any", { JOB_RETENTION_MS: String(RETENTION_MS) });
  });
  afterAll(async () => {
    await killAllRunners();
    await dev?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("survives a SIGKILL mid-upload, completes, reads back byte for byte by range, and is gone from the bucket once its session is deleted", async () => {
    const expected = shaOf(GENERATOR);
    const runnerState = join(root, "runner");
    const env = { RUNNER_LIMIT_OUTPUT_MIB: "300" };
    const first = await startRunnerProcess(runnerState, { env });
    const started = await runnerCall(first.base, "/v1/exec_command", {
      cmd: `sleep 0.5; ${GENERATOR}`,
      yield_time_ms: 250,
    });
    const handle = started.body.session_id as string;
    const sid = `full-${Date.now()}`;
    const inbox = agentClient(dev.base);
    await inbox.createSession({ id: sid });
    const { callback } = await inbox.reserveJob(sid, { handle, command: "seq" });
    await runnerCall(first.base, `/v1/processes/${handle}/callback`, {
      url: callback.url,
      token: callback.token,
    });

    // The first part is journaled: the runner dies with the rest unsent.
    await waitUntil(async () => journalParts(runnerState) >= 1, 90_000);
    await first.kill();
    const parts = Math.ceil(SIZE / (16 * MIB));
    const sentBeforeKill = journalParts(runnerState);
    expect(sentBeforeKill).toBeLessThan(parts);
    expect(await inbox.getJob(sid, handle)).toMatchObject({ status: "running", full_output: null });

    // Started again on the same state, it sends only what is left, then the completion.
    const second = await startRunnerProcess(runnerState, { env });
    // Generous: twelve 16 MiB parts took 21 s beside two busy loops; the wait ends when it completes.
    await waitUntil(async () => (await inbox.getJob(sid, handle)).status === "completed", 120_000);
    const job = await inbox.getJob(sid, handle);
    expect(job).toMatchObject({
      status: "completed",
      output_truncated: true,
      output_bytes_total: SIZE,
      full_output: { bytes: SIZE, sha256: expected },
    });
    // Listed at once: the reads below take long enough on a busy machine for retention to come.
    const bucket = await openBucket(devState);
    const prefix = `outputs/default/${sid}/`;
    expect(await bucket.keys(prefix)).toHaveLength(parts);
    expect(second.log()).toContain(`${parts} part(s), ${SIZE} bytes uploaded`);
    // What the first runner sent is not sent again.
    expect(second.log()).not.toContain(`output ${handle}: part 0 uploaded`);
    expect(second.log()).toContain(`output ${handle}: part ${parts - 1} uploaded`);

    const url = `${dev.base}/v1/sessions/${sid}/exec-jobs/${handle}/output`;
    const auth = { authorization: `Bearer ${AGENT_TOKEN}` };
    const whole = await fetch(url, { headers: auth });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("etag")).toBe(`"${expected}"`);
    expect(await hashOfStream(whole)).toEqual({ sha: expected, bytes: SIZE });

    // 1 MiB across the border of parts 5 and 6.
    const start = 6 * 16 * MIB - MIB / 2;
    const ranged = await fetch(url, {
      headers: { ...auth, range: `bytes=${start}-${start + MIB - 1}` },
    });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes ${start}-${start + MIB - 1}/${SIZE}`);
    expect((await hashOfStream(ranged)).sha).toBe(
      shaOf(`${GENERATOR} | tail -c +${start + 1} | head -c ${MIB}`),
    );

    // The agent kit's tools page and search it, streamed into the host.
    const tools = outputTools({ inbox, sessionId: sid });
    const call = { toolCallId: "t", messages: [], context: {} };
    const page = await tools.read_output.execute!(
      { session_id: handle, offset: 0, limit: 20 },
      call,
    );
    expect(page).toMatchObject({
      output: "1\n2\n3\n4\n5\n6\n7\n8\n9\n10",
      total_bytes: SIZE,
      next_offset: 20,
    });
    // A literal text: a regex (output-tools.test.ts) runs in a thread whose 2 s budget a batch
    // can overrun on a busy machine, and its 25 million lines took about a minute under load,
    // inside the retention window the reads must stay within. The last match is 190 MB in.
    const found = await tools.grep_output.execute!(
      { session_id: handle, pattern: "1234567" },
      call,
    );
    const lines = ["1234567", "11234567", ...Array.from({ length: 10 }, (_, i) => `1234567${i}`)];
    expect(found).toMatchObject({
      matched_lines: 13,
      output: [...lines, "21234567"].map((line) => `${line}: ${line}`).join("\n"),
    });

    // Deleting the session takes its 200 MiB from the bucket (retention's purge, the same
    // removal after JOB_RETENTION_MS, runs on controlled time in test/workers/full-output.test.ts).
    await inbox.deleteSession(sid);
    const gone = await fetch(url, { headers: { ...auth, range: "bytes=0-0" } });
    // The session is gone for its agent: no such session (docs/api.md).
    expect([gone.status, ((await gone.json()) as { code: string }).code]).toEqual([
      404,
      "not_found",
    ]);
    await waitUntil(async () => (await bucket.keys(prefix)).length === 0, 60_000);
    await bucket.close();
    await second.stop();
  }, 480_000);
});
