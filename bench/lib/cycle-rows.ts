// Rows of whole wake cycles, from the session objects' own counters (`GET …/stats`): a completion
// wakes each session, its agent registers a run for the resume a moment later, and the session
// suspends again. Used by the main bench's budget table and by `npm run bench -- ab` (AB_CYCLE=1);
// the durable-wake floor's rows, from its objects' `/stats`, for the same table.
import { WAKE_SETTLE_MS } from "../../src/domain/index-entry";
import type { agentClient } from "../../test/support/local-stack";
import type { execInboxSystem, WakeSystem } from "./wake-systems";

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Means per session: SQLite rows and alarms of the wake alone (read 300 ms after the webhook, when
 * the delivery's outcome has committed), the index's D1 rows from the completion until the index
 * settled after the claim (`claimMs` after the webhooks; a wake's entry waits `WAKE_SETTLE_MS`),
 * and per cycle with the next suspend. Short enough that no object closes meanwhile (locally 10 s
 * after its last request), which would start its counters again.
 */
export async function cycleRows(
  system: ReturnType<typeof execInboxSystem>,
  inbox: ReturnType<typeof agentClient>,
  options: { sessions: number; claimMs: number; label: string },
) {
  const keys = await system.prepare(options.label, options.sessions);
  // The suspends' own index writes land first, so rows counted from here are the wake's.
  await pause(500);
  const statsOf = () => Promise.all(keys.map((sid) => inbox.getSessionStats(sid)));
  const before = await statsOf();
  for (const sid of keys) {
    await system.wake(sid);
    await system.resumedAt(sid);
  }
  await pause(300);
  const woken = await statsOf();
  await pause(Math.max(0, options.claimMs - 300));
  const runs = [];
  for (const sid of keys) {
    const resumeId = (await inbox.getSession(sid)).resume?.resume_id ?? "";
    runs.push((await inbox.registerRun(sid, { resume_id: resumeId })).run_id);
  }
  await pause(WAKE_SETTLE_MS + 500);
  const claimed = await statsOf();
  for (const [i, sid] of keys.entries()) {
    await inbox.reserveJob(sid, { handle: "j1", command: "make test again" });
    await inbox.suspend(sid, runs[i] ?? "", { waiting_for: ["j1"] });
  }
  await pause(500);
  const cycled = await statsOf();
  type Counter = "rows_written" | "rows_read" | "alarms" | "index_rows_written";
  const mean = (to: typeof before, key: Counter) =>
    to.reduce((sum, stats, i) => sum + stats[key] - (before[i]?.[key] ?? 0), 0) / keys.length;
  return {
    rows_written: mean(woken, "rows_written"),
    rows_read: mean(woken, "rows_read"),
    alarms: mean(woken, "alarms"),
    index_rows_written: mean(claimed, "index_rows_written"),
    index_rows_per_cycle: mean(cycled, "index_rows_written"),
  };
}

/**
 * Means per wake of the durable-wake floor (bench/floor-worker `/wake`): the SQLite rows its object
 * read and wrote from the wake until its delivery's outcome committed. Its alarm is set a day
 * ahead and never runs, so a wake invokes none.
 */
export async function floorWakeRows(system: WakeSystem, base: string, sessions: number) {
  const keys = await system.prepare("rows", sessions);
  type Rows = { rows_read: number; rows_written: number };
  const statsOf = () =>
    Promise.all(
      keys.map(async (key) => (await (await fetch(`${base}/stats?o=${key}`)).json()) as Rows),
    );
  const before = await statsOf();
  for (const key of keys) {
    await system.wake(key);
    await system.resumedAt(key);
  }
  await pause(300);
  const after = await statsOf();
  const mean = (key: keyof Rows) =>
    after.reduce((sum, stats, i) => sum + stats[key] - (before[i]?.[key] ?? 0), 0) / keys.length;
  return { rows_written: mean("rows_written"), rows_read: mean("rows_read"), alarms: 0 };
}
