// One local workerd process serves every session object of the service, and SQLite's heap is
// shared by all of them (and the local D1), read out of the serving process itself
// (bench/lib/sqlite-heap.ts). How many sessions it holds open at once is that heap's limit over
// what each session holds (docs/benchmarks.md, the budget table). workerd
// 1.20261117 sets only SQLite's soft limit locally (it frees page cache and refuses nothing).
// Nothing is mocked: if a workerd upgrade brought a per-process cap back, or a change made a
// session hold much more, this fails where a count of our own could not.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startArrivalsHost } from "../../bench/lib/arrivals-host";
import { buildWorker, type ServedWorker, serveExecInbox } from "../../bench/lib/miniflare-stack";
import { sqliteHeapOf, sqliteLimits } from "../../bench/lib/sqlite-heap";
import { agentClient } from "../support/local-stack";

const SESSIONS = 40;
const KIB = 1024;
/**
 * A created session keeps its connection (148.6 KiB), its parsed schema (35.6), the strings that
 * made its schema and the create's own: about 310 KiB with its share of the local D1, measured
 * here. Replaying the migrations instead of the snapshot took 654 (docs/benchmarks.md).
 */
const MOST_KIB = 360;
/** The connection alone: a reading below it would mean the counter was not read at all. */
const LEAST_KIB = 148;

let state: string;
let served: ServedWorker;
let host: Awaited<ReturnType<typeof startArrivalsHost>>;

beforeAll(async () => {
  const script = buildWorker(".", ".bench/one-process-heap");
  state = mkdtempSync(join(tmpdir(), "exec-inbox-heap-"));
  host = await startArrivalsHost();
  // Kept open: on a busy machine the 40 creates may take longer than the 10 s an idle object lives.
  served = await serveExecInbox(script, state, {}, { preventEviction: true });
});

afterAll(async () => {
  await served?.stop();
  await host?.close();
  rmSync(state, { recursive: true, force: true });
});

describe("one process's SQLite heap", () => {
  it("has no hard limit in the serving process, only SQLite's soft one (which frees page cache and refuses nothing)", async () => {
    // The limits are set when the process opens its first database: a session's.
    await agentClient(served.directBase).createSession({ id: "limits", resume_url: host.url });
    expect(served.pids.length).toBeGreaterThan(0);
    for (const pid of served.pids) {
      expect(sqliteLimits(pid)).toEqual({ soft: 128 * KIB * KIB, hard: 0 });
    }
  });

  it(`holds at most ${MOST_KIB} KiB for each new session`, async () => {
    const inbox = agentClient(served.directBase);
    // The process's own first allocations (the local D1, the isolate) are not a session's.
    await inbox.createSession({ id: "warm", resume_url: host.url });
    const before = sqliteHeapOf(served.pids);
    expect(before, "SQLite's heap counter read from the workerd process").not.toBeNull();
    for (let n = 0; n < SESSIONS; n += 1) {
      await inbox.createSession({ id: `held-${n}`, resume_url: host.url });
    }
    const after = sqliteHeapOf(served.pids);
    const perSession = ((after ?? 0) - (before ?? 0)) / SESSIONS / KIB;
    expect(perSession).toBeGreaterThan(LEAST_KIB);
    expect(perSession).toBeLessThan(MOST_KIB);
  });
});
