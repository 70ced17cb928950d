// One workerd process driven past its SQLite heap ceiling for real: exec-inbox's built Worker and
// a ballast Worker share one Miniflare process, so the ballast's held rows spend the heap every
// object's database draws on (512 MiB hard limit in this workerd). Nothing of SQLite is mocked.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { retrying } from "@exec-inbox/ai-sdk/retry";
import { ExecInboxClient } from "@exec-inbox/client";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startArrivalsHost } from "../../bench/lib/arrivals-host";
import { buildWorker, builtModules, execInboxBindings } from "../../bench/lib/miniflare-stack";
import { sendCompletion } from "../../runner/src/callback-sender";
import { AGENT_TOKEN } from "../support/local-stack";

/**
 * Holds rows of random bytes in open cursors until SQLite refuses one (SQLITE_NOMEM), in ever
 * smaller pieces, so the process is left within 4 KiB of its ceiling. `release` resets the object:
 * its cursors and their rows go at once.
 */
const BALLAST = `
import { DurableObject } from "cloudflare:workers";
export class Ballast extends DurableObject {
  held = [];
  fill() {
    let piece = 1000000;
    let bytes = 0;
    for (;;) {
      try {
        this.held.push(this.ctx.storage.sql.exec("SELECT randomblob(?) AS b", piece));
        bytes += piece;
      } catch (error) {
        if (!String(error).includes("SQLITE_NOMEM")) throw error;
        if (piece <= 4096) return bytes;
        piece = Math.floor(piece / 4);
      }
    }
  }
  release() { this.ctx.abort("released"); }
}
export default {
  async fetch(request, env) {
    const stub = env.BALLAST.get(env.BALLAST.idFromName("ballast"));
    const action = new URL(request.url).pathname.slice(1);
    try {
      const value = action === "fill" ? await stub.fill() : await stub.release();
      return Response.json({ value });
    } catch (error) {
      return Response.json({ error: String(error) }, { status: action === "release" ? 200 : 500 });
    }
  },
};`;

let state: string;
let miniflare: Miniflare;
let base: string;
let host: Awaited<ReturnType<typeof startArrivalsHost>>;
let keepAlive: ReturnType<typeof setInterval> | undefined;
let topping: Promise<unknown> | undefined;

async function ballast(action: "fill" | "release"): Promise<{ value?: number }> {
  const worker = await miniflare.getWorker("ballast");
  const answer = await worker.fetch(`http://ballast/${action}`);
  return (await answer.json()) as { value?: number };
}

/**
 * Fills the heap and keeps it full: the ballast's object stays open (an idle one closes after
 * 10 s), and what the process frees meanwhile is taken again every 200 ms.
 */
async function fillHeap(): Promise<number> {
  const { value } = await ballast("fill");
  keepAlive = setInterval(() => {
    topping ??= ballast("fill").finally(() => {
      topping = undefined;
    });
  }, 200);
  return value ?? 0;
}

/** Stops the top-ups, lets the last one finish (one arriving later would fill a new ballast), frees it all. */
async function releaseHeap(): Promise<void> {
  clearInterval(keepAlive);
  await topping;
  await ballast("release");
}

/** An agent client whose every answer's status is recorded, in order. */
function recordingClient(statuses: number[]): ExecInboxClient {
  return new ExecInboxClient({
    baseUrl: base,
    token: AGENT_TOKEN,
    fetch: async (request) => {
      const answer = await fetch(request);
      statuses.push(answer.status);
      return answer;
    },
  });
}

const until = async (holds: () => boolean, what: string) => {
  for (let waited = 0; !holds(); waited += 50) {
    if (waited > 20_000) throw new Error(`never: ${what}`);
    await sleep(50);
  }
};

let script: string;
beforeAll(() => {
  script = buildWorker(".", ".bench/past-the-ceiling");
});

// A process of its own per test: an object another test left open could close mid-test and give
// its heap back, letting a request through that the test expects refused.
beforeEach(async () => {
  state = mkdtempSync(join(tmpdir(), "exec-inbox-ceiling-"));
  host = await startArrivalsHost();
  miniflare = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      resourcePersistencePath: state,
      workers: [
        {
          name: "exec-inbox",
          ...builtModules(script),
          compatibilityDate: "2026-11-17",
          compatibilityFlags: ["nodejs_compat"],
          bindings: execInboxBindings(),
          durableObjects: { SESSIONS: { className: "SessionObject", useSQLite: true } },
          d1Databases: { INDEX: "exec-inbox-index" },
          unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
        },
        {
          name: "ballast",
          modules: true,
          script: BALLAST,
          compatibilityDate: "2026-11-17",
          durableObjects: { BALLAST: { className: "Ballast", useSQLite: true } },
        },
      ],
    }),
  );
  await miniflare.ready;
  base = (await miniflare.unsafeGetDirectURL("exec-inbox")).origin;
});

afterEach(async () => {
  clearInterval(keepAlive);
  await miniflare?.dispose();
  await host?.close();
  rmSync(state, { recursive: true, force: true });
});

describe("one process past its SQLite heap ceiling", () => {
  it("a new session is refused 503 unavailable with Retry-After, changes nothing, and the kit's retry creates it once the heap is back", async () => {
    const held = await fillHeap();
    expect(held).toBeGreaterThan(256 * 1024 * 1024);
    try {
      const refused = await fetch(`${base}/v1/sessions`, {
        method: "POST",
        headers: { authorization: `Bearer ${AGENT_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ id: "ceiling-create" }),
      });
      expect({
        status: refused.status,
        type: refused.headers.get("content-type"),
        retryAfter: refused.headers.get("retry-after"),
        body: await refused.json(),
      }).toEqual({
        status: 503,
        type: "application/problem+json",
        retryAfter: "5",
        body: {
          type: "https://exec-inbox.dev/problems/unavailable",
          title: "Session unavailable",
          status: 503,
          detail: expect.stringMatching(/^the session cannot be served now \(.*\); retry$/),
          code: "unavailable",
        },
      });

      // The kit retries, waiting out each Retry-After; the heap comes back after its first refusal.
      const statuses: number[] = [];
      const created = retrying(() =>
        recordingClient(statuses).createSession({ id: "ceiling-kit" }),
      );
      await until(() => statuses.includes(503), "the kit met a 503");
      await releaseHeap();
      expect((await created).id).toBe("ceiling-kit");
      expect(statuses[0]).toBe(503);
      expect(statuses.at(-1)).toBe(201);
    } finally {
      await releaseHeap();
    }
    // The refused create left nothing: its id is free, and the kit's session exists once.
    const client = recordingClient([]);
    await expect(client.getSession("ceiling-create")).rejects.toMatchObject({
      problem: { status: 404, code: "not_found" },
    });
    await expect(client.createSession({ id: "ceiling-kit" })).rejects.toMatchObject({
      problem: { status: 409, code: "session_exists" },
    });
  });

  it("a completion that meets the ceiling is retried by the runner until it lands, and wakes its session exactly once", async () => {
    const client = recordingClient([]);
    const sid = "ceiling-wake";
    await client.createSession({ id: sid, resume_url: host.url });
    const { callback } = await client.reserveJob(sid, { handle: "j0", command: "make test" });
    const { run_id: runId } = await client.registerRun(sid);
    await client.suspend(sid, runId, { waiting_for: ["j0"] });

    await fillHeap();
    const lines: string[] = [];
    let sent: ReturnType<typeof sendCompletion> | undefined;
    try {
      sent = sendCompletion(
        {
          sessionId: sid,
          url: callback.url,
          token: callback.token,
          body: { status: "completed", exit_code: 0, output: "all green\n" },
          since: Date.now(),
        },
        { log: (line) => lines.push(line), baseDelayMs: 200 },
        new AbortController().signal,
      );
      await until(() => lines.some((line) => line.includes("503 unavailable")), "a 503");
      // Refused, it changed nothing: no wake went out.
      expect(host.arrivals(sid)).toEqual([]);
    } finally {
      await releaseHeap();
    }
    expect(await sent).toEqual({ kind: "delivered", status: 202, outcome: "accepted" });
    expect(await host.first(sid)).toBeDefined();
    await sleep(1_000);
    expect(host.arrivals(sid)).toHaveLength(1);
    const resumed = await client.getSession(sid);
    expect(resumed).toMatchObject({ status: "resuming", jobs: { running: 0, done: 1 } });
    await client.registerRun(sid, { resume_id: resumed.resume?.resume_id ?? "" });
    const { claims } = await client.claim(sid, {});
    expect(claims.map((claim) => claim.envelope.correlation_id)).toEqual(["j0"]);
  });
});
