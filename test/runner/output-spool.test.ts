import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spoolPath } from "../../runner/src/output-spool";
import { Runner } from "../../runner/src/runner";
import { freePort } from "../support/local-stack";
import { waitUntil } from "./support";

const root = mkdtempSync(join(tmpdir(), "runner-spool-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Seen {
  method: string;
  path: string;
  bytes: Buffer;
}

/** exec-inbox's part and completion routes as a recorder: 201 for a part, 202 for a completion. */
async function recorder(completionAnswers: number[] = []) {
  const seen: Seen[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      seen.push({
        method: incoming.method ?? "",
        path: incoming.url ?? "",
        bytes: Buffer.concat(chunks),
      });
      const part = incoming.method === "PUT";
      const completion = incoming.url?.endsWith("/completion") === true;
      const scripted = completion ? completionAnswers.shift() : undefined;
      if (scripted === 409) {
        outgoing
          .writeHead(409, { "content-type": "application/problem+json" })
          .end(JSON.stringify({ status: 409, code: "output_incomplete" }));
        return;
      }
      outgoing
        .writeHead(part ? 201 : 202, { "content-type": "application/json" })
        .end(part ? "{}" : JSON.stringify({ outcome: "accepted", generation: 1 }));
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: (handle: string) =>
      `http://127.0.0.1:${port}/v1/sessions/s/exec-jobs/${handle}/completion`,
    seen,
    completion: () => seen.find((request) => request.path.endsWith("/completion")),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function runToCompletion(options: {
  maxFullOutputBytes?: number;
  cmd: string;
  dir: string;
  completionAnswers?: number[];
}) {
  const inbox = await recorder(options.completionAnswers);
  const stateDir = join(root, options.dir);
  const runner = new Runner({
    stateDir,
    log: () => undefined,
    baseDelayMs: 50,
    partBytes: 256 * 1024,
    ...(options.maxFullOutputBytes === undefined
      ? {}
      : { maxFullOutputBytes: options.maxFullOutputBytes }),
  });
  const started = await runner.table.execCommand({ cmd: options.cmd, yield_time_ms: 250 });
  const handle = started.session_id!;
  runner.arm(handle, inbox.url(handle), "token");
  const settled = (options.completionAnswers?.length ?? 0) + 1;
  await waitUntil(
    async () => inbox.seen.filter((r) => r.path.endsWith("/completion")).length >= settled,
    20_000,
  );
  await runner.idle();
  const completions = inbox.seen.filter((r) => r.path.endsWith("/completion"));
  const body = JSON.parse(completions.at(-1)!.bytes.toString("utf8"));
  const spoolLeft = existsSync(spoolPath(stateDir, handle));
  await runner.close();
  await inbox.close();
  return { seen: inbox.seen, body, spoolLeft };
}

const BIG = "sleep 0.5; head -c 1000000 /dev/zero | tr '\\0' y";

describe("the runner's spool of every command's output", () => {
  it("a small output goes in the completion alone: no part, no extra request, no spool left", async () => {
    const { seen, body, spoolLeft } = await runToCompletion({
      cmd: "sleep 0.5; printf small",
      dir: "small",
    });
    expect(seen.map((request) => request.method)).toEqual(["POST"]);
    expect(body).toMatchObject({ output: "small", output_truncated: false });
    expect(body.full_output).toBeUndefined();
    expect(spoolLeft).toBe(false);
  });

  it("an output the completion cannot carry is uploaded in parts, each once, before the completion that names them", async () => {
    const { seen, body, spoolLeft } = await runToCompletion({ cmd: BIG, dir: "big" });
    const whole = Buffer.alloc(1_000_000, "y");
    const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
    // Between parts the runner heartbeats once (the job is still running for exec-inbox).
    const calls = seen
      .filter((request) => !request.path.endsWith("/heartbeat"))
      .map((request) => `${request.method} ${request.path.split("/").slice(-2).join("/")}`);
    expect(calls).toEqual([
      "PUT parts/0",
      "PUT parts/1",
      "PUT parts/2",
      "PUT parts/3",
      "POST 1001/completion",
    ]);
    const parts = seen.filter((request) => request.method === "PUT");
    expect(Buffer.concat(parts.map((part) => part.bytes))).toEqual(whole);
    expect(body.full_output).toEqual({
      bytes: 1_000_000,
      sha256: sha(whole),
      parts: parts.map((part) => ({ bytes: part.bytes.byteLength, sha256: sha(part.bytes) })),
    });
    expect(spoolLeft).toBe(false);
  });

  it("when exec-inbox says parts are missing, every part is sent again, then the completion", async () => {
    const { seen, body } = await runToCompletion({
      cmd: BIG,
      dir: "resend",
      completionAnswers: [409],
    });
    const calls = seen
      .filter((request) => !request.path.endsWith("/heartbeat"))
      .map((request) => `${request.method} ${request.path.split("/").slice(-1)[0]}`);
    expect(calls).toEqual([
      ...["PUT 0", "PUT 1", "PUT 2", "PUT 3", "POST completion"],
      ...["PUT 0", "PUT 1", "PUT 2", "PUT 3", "POST completion"],
    ]);
    expect(body.full_output.bytes).toBe(1_000_000);
  });

  it("past RUNNER_MAX_FULL_OUTPUT_BYTES the completion carries head and tail only", async () => {
    const { seen, body } = await runToCompletion({
      cmd: BIG,
      dir: "bounded",
      maxFullOutputBytes: 500_000,
    });
    expect(seen.map((request) => request.method)).toEqual(["POST"]);
    expect(body).toMatchObject({ output_truncated: true, output_bytes_total: 1_000_000 });
    expect(body.full_output).toBeUndefined();
  });
});
