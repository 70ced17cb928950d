// `npm run bench:ab -- BEFORE.js AFTER.js [N]` (a path may end in `@off` or `@on` for its
// INDEX_UPDATES): two builds of exec-inbox served side by side on workerd (Miniflare, direct
// sockets), their wakes interleaved (before, after, before, …) so the machine's load falls on both
// alike: CPU per wake of each build's workerd, and send → resumed / → 202 medians. Make each build
// with `npx wrangler deploy --dry-run --outdir .bench/NAME` before and after the change.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startArrivalsHost, wallNow } from "./lib/arrivals-host";
import { serveExecInbox } from "./lib/miniflare-stack";
import { cpuSeconds, loadAverage, settle } from "./lib/proc";
import { percentile } from "./lib/stats";
import { execInboxSystem } from "./lib/wake-systems";

async function main(): Promise<void> {
  const [before = "", after = "", countText = "300"] = process.argv.slice(2);
  const count = Number(countText);
  if (before === "" || after === "" || !Number.isSafeInteger(count) || count < 1)
    throw new Error("usage: npm run bench:ab -- BEFORE.js AFTER.js [wakes, a whole number ≥ 1]");
  const extra: Record<string, string> = process.env.INDEX_UPDATES
    ? { INDEX_UPDATES: process.env.INDEX_UPDATES }
    : {};
  const host = await startArrivalsHost();
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-ab-"));
  const builds = await Promise.all(
    [before, after].map(async (script, i) => {
      const [path = "", index] = script.split("@");
      const served = await serveExecInbox(
        path,
        join(state, String(i)),
        index === undefined ? extra : { INDEX_UPDATES: index },
      );
      const system = execInboxSystem(script, served.directBase, host, () => served.pids);
      const keys = await system.prepare(`ab${i}`, count + 30);
      await settle(() => served.pids);
      return {
        script,
        served,
        system,
        keys,
        cpu: 0,
        resumed: [] as number[],
        accepted: [] as number[],
      };
    }),
  );
  for (let i = 0; i < count + 30; i += 1) {
    for (const build of builds) {
      const key = build.keys[i] ?? "";
      const cpu0 = cpuSeconds(build.served.pids);
      const t0 = wallNow();
      await build.system.wake(key);
      const t1 = wallNow();
      const at = await build.system.resumedAt(key);
      // The delivery's outcome commits after the host answered: let it land before reading CPU.
      await new Promise((done) => setTimeout(done, 5));
      if (i < 30) continue;
      build.cpu += cpuSeconds(build.served.pids) - cpu0;
      build.accepted.push(t1 - t0);
      build.resumed.push(at - t0);
    }
  }
  console.log(`load average ${loadAverage()}; INDEX_UPDATES=${process.env.INDEX_UPDATES ?? "on"}`);
  console.log(
    "| build | CPU ms per wake | send → resumed p50 | p90 | send → 202 p50 |\n| --- | --- | --- | --- | --- |",
  );
  for (const build of builds) {
    console.log(
      `| ${build.script} | ${((build.cpu / count) * 1000).toFixed(2)} | ${percentile(build.resumed, 50).toFixed(2)} ms | ${percentile(build.resumed, 90).toFixed(2)} ms | ${percentile(build.accepted, 50).toFixed(2)} ms |`,
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
