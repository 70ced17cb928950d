// `npm run bench -- ab BEFORE.js AFTER.js [N]` (a path may end in `@off` or `@on` for its
// INDEX_UPDATES): two builds of exec-inbox served side by side on workerd (Miniflare, direct
// sockets), their wakes interleaved (before, after, before, …) so the machine's load falls on both
// alike: CPU per wake of each build's workerd, and send → resumed / → 202 medians. Make each build
// with `npx wrangler deploy --dry-run --outdir .bench/NAME` before and after the change.
// `AB_CYCLE=1` makes each wake a whole cycle: the woken agent registers its run for the resume
// `AB_CLAIM_MS` (1000) after it arrived, while the next wakes go on. The table adds each build's
// CPU over the whole timed run (background index writes included) and, from 20 more cycles after
// it, the index's D1 rows per wake (until the index settled after the claim) and per cycle (with
// the next suspend). `AB_IN_FLIGHT=16` sends each build's wakes 16 at a time (still taking turns),
// as the main run's concurrent phase does: what work shared across sessions (the index's batches)
// saves shows only there.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WAKE_SETTLE_MS } from "../src/domain/index-entry";
import { agentClient } from "../test/support/local-stack";
import { type ArrivalsHost, startArrivalsHost, wallNow } from "./lib/arrivals-host";
import { cycleRows } from "./lib/cycle-rows";
import { serveExecInbox } from "./lib/miniflare-stack";
import { cpuSeconds, loadAverage, settle } from "./lib/proc";
import { percentile } from "./lib/stats";
import { execInboxSystem } from "./lib/wake-systems";

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** One build served on workerd; `script` may end in `@on` or `@off` (its INDEX_UPDATES). */
async function serveBuild(
  script: string,
  dir: string,
  host: ArrivalsHost,
  extra: Record<string, string>,
) {
  const [path = "", index] = script.split("@");
  const served = await serveExecInbox(
    path,
    dir,
    index === undefined ? extra : { INDEX_UPDATES: index },
  );
  return {
    script,
    served,
    system: execInboxSystem(script, served.directBase, host, () => served.pids),
    inbox: agentClient(served.directBase),
    keys: [] as string[],
    claims: [] as Promise<void>[],
    cpu: 0,
    cpuAtStart: 0,
    resumed: [] as number[],
    accepted: [] as number[],
  };
}

async function main(): Promise<void> {
  const [before = "", after = "", countText = "300"] = process.argv.slice(2);
  const count = Number(countText);
  if (before === "" || after === "" || !Number.isSafeInteger(count) || count < 1)
    throw new Error("usage: npm run bench -- ab BEFORE.js AFTER.js [wakes, a whole number ≥ 1]");
  const cycle = process.env.AB_CYCLE === "1";
  const inFlight = Number(process.env.AB_IN_FLIGHT ?? 1);
  if (!Number.isSafeInteger(inFlight) || inFlight < 1)
    throw new Error("AB_IN_FLIGHT is a whole number ≥ 1 (wakes in flight at once)");
  const claimMs = Number(process.env.AB_CLAIM_MS ?? 1_000);
  const extra: Record<string, string> = process.env.INDEX_UPDATES
    ? { INDEX_UPDATES: process.env.INDEX_UPDATES }
    : {};
  const host = await startArrivalsHost();
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-ab-"));
  // Served one after the other: each build's processes are those that appeared while it started,
  // so two starting at once would each count both. Their sessions are made at the same time: an
  // object idle for 10 s is closed, and one build's waking objects must not be colder than the
  // other's.
  const builds: Awaited<ReturnType<typeof serveBuild>>[] = [];
  for (const [i, script] of [before, after].entries())
    builds.push(await serveBuild(script, join(state, String(i)), host, extra));
  await Promise.all(
    builds.map(async (build, i) => {
      build.keys = await build.system.prepare(`ab${i}`, count + 30);
    }),
  );
  await settle(() => builds.flatMap((build) => build.served.pids));
  // Wakes go in turns of `inFlight` at once per build (one by default): before's turn, after's, …
  for (let first = 0; first < count + 30; first += inFlight) {
    for (const build of builds) {
      const turn = build.keys.slice(first, Math.min(first + inFlight, count + 30));
      if (first <= 30 && first + turn.length > 30) build.cpuAtStart = cpuSeconds(build.served.pids);
      const cpu0 = cpuSeconds(build.served.pids);
      await Promise.all(
        turn.map(async (key, k) => {
          const t0 = wallNow();
          await build.system.wake(key);
          const t1 = wallNow();
          const at = await build.system.resumedAt(key);
          if (cycle) {
            // The woken agent takes its resume a moment later (its host starts it), as others wake.
            const resumeId = String((await host.first(key))?.body.resume_id ?? "");
            build.claims.push(
              pause(claimMs).then(async () => {
                await build.inbox.registerRun(key, { resume_id: resumeId });
              }),
            );
          }
          if (first + k < 30) return;
          build.accepted.push(t1 - t0);
          build.resumed.push(at - t0);
        }),
      );
      // The delivery's outcome commits after the host answered: let it land before reading CPU.
      await new Promise((done) => setTimeout(done, 5));
      if (first >= 30) build.cpu += cpuSeconds(build.served.pids) - cpu0;
    }
  }
  await Promise.all(builds.flatMap((build) => build.claims));
  // Writes the index holds back (a wake's settle window) go out before the whole-run CPU is read.
  await pause(WAKE_SETTLE_MS + 1_000);
  // Both builds' CPU is read before either counts rows: a phase of one must not fall on the other.
  const wholeCpu = builds.map((build) => cpuSeconds(build.served.pids) - build.cpuAtStart);
  const figures = [];
  for (const [i, build] of builds.entries()) {
    figures.push({
      build,
      wholeCpu: wholeCpu[i] ?? 0,
      rows: cycle
        ? await cycleRows(build.system, build.inbox, { sessions: 20, claimMs, label: "rows" })
        : null,
    });
  }
  console.log(
    `load average ${loadAverage()}; INDEX_UPDATES=${process.env.INDEX_UPDATES ?? "on"}; AB_CYCLE=${cycle ? "1" : "0"}`,
  );
  console.log(
    "| build | CPU ms per wake | whole-run CPU ms per wake | D1 rows per wake | D1 rows per cycle | send → resumed p50 | p90 | send → 202 p50 |\n| --- | --- | --- | --- | --- | --- | --- | --- |",
  );
  for (const { build, wholeCpu, rows } of figures) {
    console.log(
      `| ${build.script} | ${((build.cpu / count) * 1000).toFixed(2)} | ${((wholeCpu / count) * 1000).toFixed(2)} | ${rows?.index_rows_written.toFixed(2) ?? "—"} | ${rows?.index_rows_per_cycle.toFixed(2) ?? "—"} | ${percentile(build.resumed, 50).toFixed(2)} ms | ${percentile(build.resumed, 90).toFixed(2)} ms | ${percentile(build.accepted, 50).toFixed(2)} ms |`,
    );
    await build.served.stop();
  }
  await host.close();
  rmSync(state, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
