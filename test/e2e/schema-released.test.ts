// What a new session object keeps of SQLite's heap, read out of the serving workerd process
// itself (bench/lib/sqlite-heap.ts): the strings that made its schema are let go once it is made
// (prepared-statements.ts, decision 190). Nothing is mocked: if the runtime stopped evicting them
// (another workerd, other limits), this fails where a count of our own could not.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startArrivalsHost } from "../../bench/lib/arrivals-host";
import { buildWorker, type ServedWorker, serveExecInbox } from "../../bench/lib/miniflare-stack";
import { sqliteHeapOf } from "../../bench/lib/sqlite-heap";
import {
  FILLERS,
  LEFT_PREPARED,
  WORKERD_LIMITS,
} from "../../src/session-object/prepared-statements";
import { agentClient } from "../support/local-stack";

const SESSIONS = 40;
const KIB = 1024;
/**
 * A created session keeps its connection (148.6 KiB), its parsed schema (35.6), the ten fillers
 * (14) and the create's own strings: about 220 KiB (docs/benchmarks.md). Were the schema's strings
 * kept (the snapshot, the migrations after it), it would be about 290.
 */
const MOST_KIB = 250;
/** The connection alone: a reading below it would mean the counter was not read at all. */
const LEAST_KIB = 148;

let state: string;
let served: ServedWorker;
let host: Awaited<ReturnType<typeof startArrivalsHost>>;

beforeAll(async () => {
  const script = buildWorker(".", ".bench/schema-released");
  state = mkdtempSync(join(tmpdir(), "exec-inbox-released-"));
  host = await startArrivalsHost();
  served = await serveExecInbox(script, state);
});

afterAll(async () => {
  await served?.stop();
  await host?.close();
  rmSync(state, { recursive: true, force: true });
});

describe("a new session's SQLite heap", () => {
  it("the fillers pass workerd's statement cache together, each is SQL SQLite accepts, and the ones left fit in it", () => {
    const total = (strings: readonly string[]) => strings.reduce((sum, s) => sum + s.length, 0);
    expect(total(FILLERS)).toBeGreaterThan(WORKERD_LIMITS.statementCache);
    for (const filler of FILLERS) expect(filler.length).toBeLessThan(WORKERD_LIMITS.sqlText);
    expect(total(LEFT_PREPARED)).toBeLessThanOrEqual(WORKERD_LIMITS.statementCache);
    // Each is one statement and blanks: SQLite keeps its text only up to the semicolon.
    for (const filler of FILLERS) expect(filler.trimEnd()).toMatch(/^SELECT \d+;$/);
  });

  it(`holds at most ${MOST_KIB} KiB once created, its schema's statements not kept`, async () => {
    const inbox = agentClient(served.directBase);
    // The process's own first allocations (the local D1, the isolate) are not a session's.
    await inbox.createSession({ id: "warm", resume_url: host.url });
    const before = sqliteHeapOf(served.pids);
    expect(before, "SQLite's heap counter read from the workerd process").not.toBeNull();
    for (let n = 0; n < SESSIONS; n += 1) {
      await inbox.createSession({ id: `released-${n}`, resume_url: host.url });
    }
    const after = sqliteHeapOf(served.pids);
    const perSession = ((after ?? 0) - (before ?? 0)) / SESSIONS / KIB;
    expect(perSession).toBeGreaterThan(LEAST_KIB);
    expect(perSession).toBeLessThan(MOST_KIB);
  });
});
