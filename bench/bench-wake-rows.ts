// `npm run bench -- rows [BEFORE.js AFTER.js]`: the SQLite rows one wake writes and reads, from the
// session object's own counters (`GET /v1/sessions/{sid}/stats`), for each build given (default:
// this tree, built into .bench/wake-rows), served on workerd through Miniflare: the completion
// → delivered part (what `npm run bench` prices), then the woken agent's turn (register the run
// for the resume, claim, ack, finish), and the price of each per million at list prices
// (bench/lib/prices.ts). Each build gets its own process and state; nothing is timed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentClient } from "../test/support/local-stack";
import { startArrivalsHost } from "./lib/arrivals-host";
import { buildWorker, serveExecInbox } from "./lib/miniflare-stack";
import { PRICE } from "./lib/prices";
import { execInboxSystem } from "./lib/wake-systems";

const SESSIONS = 10;

type Tally = { written: number; read: number };

async function measureBuild(script: string, state: string) {
  const host = await startArrivalsHost();
  const served = await serveExecInbox(script, state);
  try {
    const system = execInboxSystem(script, served.directBase, host, () => served.pids);
    const inbox = agentClient(served.directBase);
    const keys = await system.prepare("rows", SESSIONS);
    const stats = async (sid: string): Promise<Tally> => {
      const body = await inbox.getSessionStats(sid);
      return { written: body.rows_written, read: body.rows_read };
    };
    const wake: Tally = { written: 0, read: 0 };
    const turn: Tally = { written: 0, read: 0 };
    const add = (into: Tally, from: Tally, to: Tally) => {
      into.written += (to.written - from.written) / keys.length;
      into.read += (to.read - from.read) / keys.length;
    };
    for (const sid of keys) {
      const before = await stats(sid);
      await system.wake(sid);
      await system.resumedAt(sid);
      // The delivery's outcome commits after the host answered.
      await new Promise((done) => setTimeout(done, 300));
      const woken = await stats(sid);
      add(wake, before, woken);
      const view = await inbox.getSession(sid);
      const { run_id: runId } = await inbox.registerRun(sid, {
        resume_id: view.resume?.resume_id ?? undefined,
      });
      const { claims } = await inbox.claim(sid);
      await inbox.ack(sid, { ids: claims.map((claim) => claim.envelope.id) });
      await inbox.finishRun(sid, runId);
      add(turn, woken, await stats(sid));
    }
    return { wake, turn };
  } finally {
    await served.stop();
    await host.close();
  }
}

const usd = (tally: Tally) =>
  tally.written * PRICE.sqliteRowWritten + tally.read * PRICE.sqliteRowRead;

async function main(): Promise<void> {
  const given = process.argv.slice(2);
  const scripts = given.length > 0 ? given : [buildWorker(".", ".bench/wake-rows")];
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-rows-"));
  try {
    console.log(
      "| build | rows written per wake (completion → delivered) | rows read | USD per million wakes (SQLite rows) | the agent's turn after it (run, claim, ack, finish): written | read | USD per million |",
    );
    console.log("| --- | --- | --- | --- | --- | --- | --- |");
    for (const [i, script] of scripts.entries()) {
      const { wake, turn } = await measureBuild(script, join(state, String(i)));
      console.log(
        `| ${script} | ${wake.written.toFixed(2)} | ${wake.read.toFixed(2)} | ${usd(wake).toFixed(2)} | ${turn.written.toFixed(2)} | ${turn.read.toFixed(2)} | ${usd(turn).toFixed(2)} |`,
      );
    }
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

await main();
