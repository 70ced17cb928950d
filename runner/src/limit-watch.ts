// Watches one running command against its limits and names the first one it passed. Ending the
// command, and reporting which limit did, is left to the process table.
import { type Dir, lstatSync, opendirSync } from "node:fs";
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
/** The workspace walk goes on every this many ticks, this many entries at a time. */
const DISK_EVERY_TICKS = 5;
const ENTRIES_PER_STEP = 10_000;
/**
 * Every entry counts at least one block of the usual file system, as `du` would: a tree of many
 * empty files fills a disk too, and the charge bounds a walk at `diskBytes / BLOCK` entries.
 */
export const BLOCK = 4096;

const charge = (size: number): number => Math.max(BLOCK, Math.ceil(size / BLOCK) * BLOCK);

/**
 * Walks one workspace a few thousand entries at a time — a directory of a million names included —
 * so a tree of any size is summed without a long stall of the runner. Every entry is counted; a
 * pass ends at the tree's end or at `limit`, and the next step starts a new one.
 */
export class DiskMeter {
  private readonly dirs: string[] = [];
  private open: { readonly dir: Dir; readonly path: string } | null = null;
  private bytes = 0;
  private walking = false;

  constructor(
    private readonly root: string,
    private readonly limit: number,
  ) {}

  /** Goes on for at most `budget` entries: the bytes counted so far in this pass, and if it ended. */
  step(budget: number): { readonly bytes: number; readonly done: boolean } {
    if (!this.walking) {
      this.walking = true;
      this.dirs.push(this.root);
      this.bytes = 0;
    }
    for (let left = budget; left > 0 && this.bytes < this.limit; left -= 1) {
      if (this.open === null) {
        const path = this.dirs.pop();
        if (path === undefined) break;
        try {
          this.open = { dir: opendirSync(path), path };
        } catch {
          // Removed since it was listed.
        }
        continue;
      }
      const entry = this.open.dir.readSync();
      if (entry === null) {
        this.close();
        continue;
      }
      const path = join(this.open.path, entry.name);
      try {
        const stat = lstatSync(path);
        if (stat.isDirectory()) this.dirs.push(path);
        this.bytes += charge(stat.size);
      } catch {
        // Removed since the listing.
      }
    }
    const done = this.bytes >= this.limit || (this.open === null && this.dirs.length === 0);
    if (done) {
      this.close();
      this.dirs.length = 0;
      this.walking = false;
    }
    return { bytes: this.bytes, done };
  }

  /** The whole tree at once (bounded by `limit / BLOCK` entries): at exit. */
  measure(): number {
    for (;;) {
      const { bytes, done } = this.step(ENTRIES_PER_STEP);
      if (done) return bytes;
    }
  }

  close(): void {
    try {
      this.open?.dir.closeSync();
    } catch {
      // Already closed.
    }
    this.open = null;
  }
}

export interface Watched {
  readonly startedAt: number;
  readonly cgroup: CommandCgroup;
  readonly workspace: string | null;
  outputBytes(): number;
}

/**
 * The first limit `watched` has passed, or null. With a `disk` meter the walk goes one step on;
 * with "final", the whole workspace is measured (a workspace at the limit counts).
 */
export function limitPassed(
  watched: Watched,
  limits: Limits,
  now: number,
  disk: DiskMeter | "final" | null,
): LimitHit | null {
  if (watched.cgroup.memoryLimitHit()) return "memory_limit";
  if (watched.cgroup.pidsLimitHit()) return "pids_limit";
  if (watched.outputBytes() > limits.outputBytes) return "output_limit";
  if (disk !== null && watched.workspace !== null) {
    // At the limit counts: RLIMIT_FSIZE stops a single file exactly there.
    const bytes =
      disk === "final"
        ? new DiskMeter(watched.workspace, limits.diskBytes).measure()
        : disk.step(ENTRIES_PER_STEP).bytes;
    if (bytes >= limits.diskBytes) return "disk_limit";
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
  const meter =
    watched.workspace === null ? null : new DiskMeter(watched.workspace, limits.diskBytes);
  const timer = setInterval(() => {
    ticks += 1;
    const hit = limitPassed(
      watched,
      limits,
      Date.now(),
      ticks % DISK_EVERY_TICKS === 0 ? meter : null,
    );
    if (hit === null) return;
    clearInterval(timer);
    meter?.close();
    onHit(hit);
  }, TICK_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    meter?.close();
  };
}
