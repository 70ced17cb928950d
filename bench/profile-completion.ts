// `npm run bench -- profile [N]`: a CPU profile of the exec-inbox isolate (workerd's inspector) while
// N completions each wake a suspended session, one after another, on the built Worker under
// Miniflare. Prints where the isolate's CPU went: self time and total time per function.
// INDEX_UPDATES=off in the environment leaves the index's D1 writes out; PROFILE_OUT=FILE keeps
// the raw profile, and PROFILE_TAIL_MS profiles that long after the last wake (the index's held
// entries go out 5 s after theirs).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../test/support/local-stack";
import { startArrivalsHost } from "./lib/arrivals-host";
import { devtools } from "./lib/devtools";
import { buildWorker, serveExecInbox } from "./lib/miniflare-stack";
import { execInboxSystem } from "./lib/wake-systems";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Self and total milliseconds per function (a recursive function counts once per sample). */
function summarise(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const name = (node: ProfileNode) => {
    const file = node.callFrame.url.split("/").pop() ?? "";
    return `${node.callFrame.functionName || "(anonymous)"} ${file}:${node.callFrame.lineNumber + 1}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  profile.samples.forEach((sample, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const leaf = byId.get(sample);
    if (leaf === undefined) return;
    self.set(name(leaf), (self.get(name(leaf)) ?? 0) + ms);
    const seen = new Set<string>();
    for (
      let node: ProfileNode | undefined = leaf;
      node;
      node = byId.get(parent.get(node.id) ?? -1)
    ) {
      const key = name(node);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + ms);
    }
  });
  return { self, total };
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 300);
  // A built Worker to profile instead of this checkout's (e.g. an older build, for before → after).
  const script = process.argv[3];
  if (!Number.isSafeInteger(count) || count < 1)
    throw new Error(
      "usage: npm run bench -- profile [completions, a whole number ≥ 1] [built Worker .js]",
    );
  const host = await startArrivalsHost();
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-profile-"));
  const inspectorPort = await freePort();
  // INDEX_UPDATES=off in the environment profiles the session object without the index's writes.
  const extra: Record<string, string> = process.env.INDEX_UPDATES
    ? { INDEX_UPDATES: process.env.INDEX_UPDATES }
    : {};
  const built = script ?? buildWorker(".", ".bench/exec-inbox");
  const served = await serveExecInbox(built, state, extra, {
    inspectorPort,
  });
  try {
    const system = execInboxSystem("profile", served.base, host, () => served.pids);
    const keys = await system.prepare("profile", count + 50);
    for (const key of keys.slice(0, 50)) {
      await system.wake(key);
      await system.resumedAt(key);
    }
    // Miniflare names the user's Worker "core:user:<name>"; its entry worker and D1 are others.
    const inspector = await devtools(
      inspectorPort,
      (target) => target.id?.startsWith("core:user:") === true,
    );
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: 50 });
    await inspector.send("Profiler.start");
    const started = performance.now();
    for (const key of keys.slice(50)) {
      await system.wake(key);
      await system.resumedAt(key);
    }
    const elapsed = performance.now() - started;
    await new Promise((done) => setTimeout(done, Number(process.env.PROFILE_TAIL_MS ?? 100)));
    const { profile } = (await inspector.send("Profiler.stop")) as {
      profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
    };
    inspector.close();
    // PROFILE_OUT=FILE keeps the raw profile (Chrome DevTools' .cpuprofile) for a closer look.
    if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));
    const { self, total } = summarise(profile);
    const busy = [...self.entries()]
      .filter(([key]) => !key.startsWith("(idle)"))
      .reduce((sum, [, ms]) => sum + ms, 0);
    console.log(
      `${count} wakes in ${elapsed.toFixed(0)} ms; isolate busy ${(busy / count).toFixed(3)} ms per wake (JS and what it calls; sampled every 50 µs)`,
    );
    const top = (map: Map<string, number>, title: string) => {
      console.log(`\n| ${title} | ms per wake |\n| --- | --- |`);
      for (const [key, ms] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
        if (key.startsWith("(idle)") || key.startsWith("(root)")) continue;
        console.log(`| ${key} | ${(ms / count).toFixed(3)} |`);
      }
    };
    top(self, "self time");
    top(total, "total time (with callees)");
  } finally {
    await served.stop();
    await host.close();
    rmSync(state, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
