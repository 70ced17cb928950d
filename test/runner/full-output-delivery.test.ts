import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Runner } from "../../runner/src/runner";
import { freePort } from "../support/local-stack";

const root = mkdtempSync(join(tmpdir(), "full-output-delivery-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Answer = { status: number; code?: string };
interface Seen {
  method: string;
  path: string;
  body: string;
}

/** A fake exec-inbox whose answers a test scripts per request. */
async function fake(answer: (req: IncomingMessage, body: Buffer) => Answer) {
  const seen: Seen[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (c: Buffer) => chunks.push(c));
    incoming.on("end", () => {
      const body = Buffer.concat(chunks);
      seen.push({
        method: incoming.method ?? "",
        path: incoming.url ?? "",
        body: incoming.method === "PUT" ? "" : body.toString(),
      });
      const a = answer(incoming, body);
      const json =
        a.code === undefined
          ? incoming.method === "PUT"
            ? "{}"
            : JSON.stringify({ outcome: "accepted", generation: 1 })
          : JSON.stringify({ status: a.status, code: a.code });
      outgoing.writeHead(a.status, { "content-type": "application/json" }).end(json);
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  return {
    url: (h: string) => `http://127.0.0.1:${port}/v1/sessions/s/exec-jobs/${h}/completion`,
    seen,
    completions: () => seen.filter((r) => r.path.endsWith("/completion")),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const BIG = "sleep 0.3; head -c 1000000 /dev/zero | tr '\\0' y";

async function run(dir: string, answer: (req: IncomingMessage, body: Buffer) => Answer) {
  const inbox = await fake(answer);
  const runner = new Runner({
    stateDir: join(root, dir),
    log: (l) => console.log(l),
    baseDelayMs: 20,
    maxDelayMs: 50,
    callbackGiveUpMs: 3000,
    partBytes: 256 * 1024,
  });
  const started = await runner.table.execCommand({ cmd: BIG, yield_time_ms: 100 });
  const handle = started.session_id!;
  runner.arm(handle, inbox.url(handle), "token");
  // Its callback is in flight only once it has exited and the runner's report, queued with
  // setImmediate at the exit, has run: idle() before that waits for nothing. An immediate queued
  // after it runs after it, however slow the machine (a fixed sleep here raced the exit).
  await runner.table.get(handle).exited;
  await new Promise((r) => setImmediate(r));
  await runner.idle().catch(() => undefined);
  const completions = inbox.completions().map((c) => JSON.parse(c.body));
  await runner.close();
  await inbox.close();
  return { completions, seen: inbox.seen };
}

const withFull = (body: Buffer) =>
  body.length > 0 && JSON.parse(body.toString()).full_output !== undefined;

describe("full-output delivery: the runner must not lose a result over its full output", () => {
  it("R1: parts refused 413 (upload tally): the completion is sent without full_output", async () => {
    const { completions } = await run("r1", (req, body) => {
      if (req.method === "PUT") return { status: 413, code: "payload_too_large" };
      if (req.url?.endsWith("/heartbeat")) return { status: 200 };
      return withFull(body) ? { status: 409, code: "output_incomplete" } : { status: 202 };
    });
    console.log(
      "R1 completions:",
      completions.map((c) => (c.full_output === undefined ? "no full_output" : "full_output")),
    );
    expect(completions.some((c) => c.full_output === undefined)).toBe(true);
  });

  it("R2: parts never there (409 output_incomplete every round): the result still gets through", async () => {
    const { completions } = await run("r2", (req, body) => {
      if (req.method === "PUT") return { status: 201 };
      if (req.url?.endsWith("/heartbeat")) return { status: 200 };
      return withFull(body) ? { status: 409, code: "output_incomplete" } : { status: 202 };
    });
    console.log(
      "R2 completions:",
      completions.map((c) => (c.full_output === undefined ? "no full_output" : "full_output")),
    );
    expect(completions.some((c) => c.full_output === undefined)).toBe(true);
  });

  it("R3: full_output over exec-inbox's MAX_FULL_OUTPUT_BYTES (413 on the completion): sent without it", async () => {
    const { completions } = await run("r3", (req, body) => {
      if (req.method === "PUT") return { status: 201 };
      if (req.url?.endsWith("/heartbeat")) return { status: 200 };
      return withFull(body) ? { status: 413, code: "payload_too_large" } : { status: 202 };
    });
    console.log(
      "R3 completions:",
      completions.map((c) =>
        c.full_output === undefined
          ? "no full_output"
          : `full_output, output ${c.output.length} chars`,
      ),
    );
    expect(completions.some((c) => c.full_output === undefined)).toBe(true);
  });
});

describe("full-output delivery: heartbeats during the upload", () => {
  it("R4: a part slower than a third of the timeout: heartbeats go on every third of it", async () => {
    const beats: number[] = [];
    const puts: number[] = [];
    const seen: string[] = [];
    const server: Server = createServer((incoming, outgoing) => {
      incoming.resume();
      incoming.on("end", () => {
        const now = Date.now();
        seen.push(`${incoming.method} ${incoming.url}`);
        if (incoming.url?.endsWith("/heartbeat")) {
          beats.push(now);
          outgoing.writeHead(200, { "content-type": "application/json" }).end(
            JSON.stringify({
              status: "running",
              cancel_requested: false,
              heartbeat_timeout_ms: 6000,
            }),
          );
        } else if (incoming.method === "PUT") {
          puts.push(now);
          // A slow link: each 256 KiB part takes 7 s to go through.
          setTimeout(
            () => outgoing.writeHead(201, { "content-type": "application/json" }).end("{}"),
            7000,
          );
        } else {
          outgoing
            .writeHead(202, { "content-type": "application/json" })
            .end(JSON.stringify({ outcome: "accepted", generation: 1 }));
        }
      });
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    const runner = new Runner({
      stateDir: join(root, "r4"),
      log: () => undefined,
      baseDelayMs: 20,
      partBytes: 256 * 1024,
    });
    const started = await runner.table.execCommand({
      cmd: "head -c 600000 /dev/zero | tr '\\0' y; sleep 1",
      yield_time_ms: 100,
    });
    const h = started.session_id!;
    const base = `http://127.0.0.1:${port}/v1/sessions/s/exec-jobs/${h}`;
    runner.arm(h, `${base}/completion`, "token", {
      heartbeat_url: `${base}/heartbeat`,
      heartbeat_timeout_ms: 6000,
    });
    for (let i = 0; i < 400 && !seen.some((x) => x.endsWith("/completion")); i += 1)
      await new Promise((r) => setTimeout(r, 100));
    const events = [
      ...beats.map((t) => ["beat", t] as const),
      ...puts.map((t) => ["put", t] as const),
    ].sort((a, b) => a[1] - b[1]);
    let worst = 0;
    for (let i = 1; i < beats.length; i += 1) worst = Math.max(worst, beats[i]! - beats[i - 1]!);
    console.log(
      "R4 events:",
      events.map(([k, t]) => `${k}@${t - events[0]![1]}`).join(" "),
      "largest gap between heartbeats (ms):",
      worst,
    );
    await runner.close();
    await new Promise<void>((r) => server.close(() => r()));
    // Contract §9: a runner heartbeats at least every third of the timeout (2 s here).
    expect(worst).toBeLessThanOrEqual(2000 + 500);
  }, 60_000);

  it("a part retried (503): its retries wait at most a third of the heartbeat timeout", async () => {
    const puts: number[] = [];
    let completed = false;
    const server: Server = createServer((incoming, outgoing) => {
      incoming.resume();
      incoming.on("end", () => {
        const json = { "content-type": "application/json" };
        if (incoming.url?.endsWith("/heartbeat")) {
          const reply = { status: "running", cancel_requested: false, heartbeat_timeout_ms: 3000 };
          outgoing.writeHead(200, json).end(JSON.stringify(reply));
        } else if (incoming.method === "PUT") {
          puts.push(Date.now());
          // Unavailable for six tries: uncapped, the backoff (base 500 ms) would reach 8-16 s.
          if (puts.length <= 6) outgoing.writeHead(503, json).end('{"code":"unavailable"}');
          else outgoing.writeHead(201, json).end("{}");
        } else {
          completed = true;
          outgoing.writeHead(202, json).end(JSON.stringify({ outcome: "accepted", generation: 1 }));
        }
      });
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    // The defaults of the real runner: base 500 ms, cap 30 s.
    const runner = new Runner({
      stateDir: join(root, "cap"),
      log: () => undefined,
      partBytes: 1 << 20,
    });
    const started = await runner.table.execCommand({
      cmd: "sleep 0.3; head -c 600000 /dev/zero | tr '\\0' y",
      yield_time_ms: 100,
    });
    const h = started.session_id!;
    const base = `http://127.0.0.1:${port}/v1/sessions/s/exec-jobs/${h}`;
    runner.arm(h, `${base}/completion`, "token", {
      heartbeat_url: `${base}/heartbeat`,
      heartbeat_timeout_ms: 3000,
    });
    for (let i = 0; i < 300 && !completed; i += 1) await new Promise((r) => setTimeout(r, 100));
    await runner.close();
    await new Promise<void>((r) => server.close(() => r()));
    const gaps = puts.slice(1).map((t, i) => t - puts[i]!);
    console.log("gaps between part tries (ms):", gaps);
    expect(completed).toBe(true);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(1000 + 300);
  }, 60_000);
});

describe("full-output delivery: spools outliving the runner", () => {
  it("R5: the spool of a command never armed is deleted when the runner starts again", async () => {
    const { readdirSync, statSync } = await import("node:fs");
    const stateDir = join(root, "r5");
    const first = new Runner({ stateDir, log: () => undefined });
    const started = await first.table.execCommand({
      cmd: "head -c 3000000 /dev/zero | tr '\\0' y; sleep 30",
      yield_time_ms: 1500,
    });
    await first.close(100);
    const second = new Runner({ stateDir, log: () => undefined });
    second.recover();
    second.prune(Date.now() + 10 * 3_600_000);
    await second.close(100);
    const left = readdirSync(join(stateDir, "outputs")).map(
      (n) => `${n} ${statSync(join(stateDir, "outputs", n)).size}`,
    );
    console.log("R5 left in outputs/:", left, "handle", started.session_id);
    expect(left).toEqual([]);
  });
});
