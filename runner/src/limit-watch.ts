// Watches one running command against its limits and names the first one it passed. Ending the
// command, and reporting which limit did, is left to the process table.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { CommandCgroup } from "./cgroup";
import type { Limits } from "./sandbox-settings";

export type LimitHit =
  | "runner_timeout"
  | "memory_limit"
  | "pids_limit"
  | "output_limit"
  | "disk_limit";

const TICK_MS = 100;
/** The workspace is walked every this many ticks: a walk costs a stat per file. */
const DISK_EVERY_TICKS = 5;
/** A bigger tree is not measured (too costly to walk twice a second): RLIMIT_FSIZE still holds. */
const MAX_WALKED_ENTRIES = 20_000;

/** Apparent bytes under `dir` (what RLIMIT_FSIZE counts), or null past MAX_WALKED_ENTRIES. */
export function treeBytes(dir: string): number | null {
  let total = 0;
  let entries = 0;
  const pending = [dir];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    let names: string[];
    try {
      names = readdirSync(next);
    } catch {
      continue;
    }
    for (const name of names) {
      entries += 1;
      if (entries > MAX_WALKED_ENTRIES) return null;
      const path = join(next, name);
      try {
        const stat = lstatSync(path);
        if (stat.isDirectory()) pending.push(path);
        else total += stat.size;
      } catch {
        // Removed since the listing.
      }
    }
  }
  return total;
}

export interface Watched {
  readonly startedAt: number;
  readonly cgroup: CommandCgroup;
  readonly workspace: string | null;
  outputBytes(): number;
}

/** The first limit `watched` has passed, or null. `final` also counts a workspace at the limit. */
export function limitPassed(
  watched: Watched,
  limits: Limits,
  now: number,
  disk: boolean,
): LimitHit | null {
  if (watched.cgroup.memoryLimitHit()) return "memory_limit";
  if (watched.cgroup.pidsLimitHit()) return "pids_limit";
  if (watched.outputBytes() > limits.outputBytes) return "output_limit";
  if (disk && watched.workspace !== null) {
    // At the limit counts: RLIMIT_FSIZE stops a single file exactly there.
    const bytes = treeBytes(watched.workspace);
    if (bytes !== null && bytes >= limits.diskBytes) return "disk_limit";
  }
  if (now - watched.startedAt >= limits.wallMs) return "runner_timeout";
  return null;
}

/** Calls `onHit` once, with the first limit passed; returns the stop function. */
export function watchLimits(
  watched: Watched,
  limits: Limits,
  onHit: (hit: LimitHit) => void,
): () => void {
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
    const hit = limitPassed(watched, limits, Date.now(), ticks % DISK_EVERY_TICKS === 0);
    if (hit === null) return;
    clearInterval(timer);
    onHit(hit);
  }, TICK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
