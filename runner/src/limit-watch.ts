// Watches one running command against its limits and names the first one it passed. Ending the
// command, and reporting which limit did, is left to the process table.
import { type ChildProcess, spawn } from "node:child_process";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  opendirSync,
  openSync,
  type Stats,
} from "node:fs";
import type { CommandCgroup } from "./cgroup";
import type { Limits } from "./sandbox-settings";

export type LimitHit =
  | "runner_timeout"
  | "memory_limit"
  | "pids_limit"
  | "output_limit"
  | "disk_limit";

const TICK_MS = 100;
/** The workspace's size is asked for every this many ticks (a walk still running is not restarted). */
const DISK_EVERY_TICKS = 5;
/**
 * Every entry counts at least one block of the usual file system, as `du` would: a tree of many
 * empty files fills a disk too, and the charge bounds a walk at `diskBytes / BLOCK` entries.
 */
const BLOCK = 4096;

const charge = (size: number): number => Math.max(BLOCK, Math.ceil(size / BLOCK) * BLOCK);

/**
 * GNU find walks the workspace: by directory descriptors, so a path past PATH_MAX is walked like
 * any other; without following a symlink, even one swapped in for a directory during the walk; in
 * a process of its own, so a tree of any size never stalls the runner.
 */
const FIND = "/usr/bin/find";

/**
 * Sums one workspace, a pass at a time. A pass that reaches the limit stops there; the bytes known
 * are the last pass's total, or the running pass's count once that reached the limit.
 */
export class DiskMeter {
  private walk: ChildProcess | null = null;
  private known = 0;
  private big = false;

  constructor(
    private readonly root: string,
    private readonly limit: number,
  ) {}

  /**
   * The bytes known now. A small workspace is walked here and then (no process to spawn twice a
   * second per command); a big or odd one gets a find pass, unless one is running.
   */
  poll(): number {
    if (this.walk !== null) return this.known;
    // Once too big for the walk here, find's from then on: the tree rarely shrinks back.
    const quick = this.big ? null : quickMeasure(this.root, this.limit);
    this.big = quick === null;
    if (quick === null) void this.pass();
    else this.known = quick;
    return this.known;
  }

  /** The whole workspace (or up to the limit), in this process when it is small: what exit checks. */
  async measure(): Promise<number> {
    return quickMeasure(this.root, this.limit) ?? this.pass();
  }

  private pass(): Promise<number> {
    return new Promise((resolve) => {
      let counted = 0;
      let partial = "";
      const walk = spawn(FIND, [this.root, "-xdev", "-printf", "%s\n"], {
        stdio: ["ignore", "pipe", "ignore"],
      });
      this.walk = walk;
      walk.stdout.setEncoding("latin1");
      walk.stdout.on("data", (chunk: string) => {
        const lines = (partial + chunk).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines) counted += charge(Number(line) || 0);
        if (counted >= this.limit) {
          this.known = counted;
          walk.kill("SIGKILL");
        }
      });
      const done = () => {
        if (this.walk === walk) this.walk = null;
        this.known = counted;
        resolve(counted);
      };
      walk.once("error", done);
      walk.once("close", done);
    });
  }

  close(): void {
    this.walk?.kill("SIGKILL");
    this.walk = null;
  }
}

const OPEN_DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The workspace's bytes at a command's exit, walked in this process when the tree is small — a
 * process spawned for find costs a short command ~12 ms here — or null when it is not (more than
 * `entries` entries, deeper than `depth`, anything odd): then find walks it. Every directory is
 * opened without following a link and read through its descriptor (`/proc/self/fd/N/name`), so a
 * directory swapped for a symlink is never followed and no path grows past PATH_MAX.
 */
export function quickMeasure(
  root: string,
  limit: number,
  entries = 5_000,
  depth = 32,
): number | null {
  let left = entries;
  let counted = 0;
  const walk = (fd: number, level: number): boolean => {
    const dir = opendirSync(`/proc/self/fd/${fd}`);
    try {
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        left -= 1;
        if (left < 0) return false;
        const child = `/proc/self/fd/${fd}/${entry.name}`;
        let stat: Stats;
        try {
          stat = lstatSync(child);
        } catch {
          continue; // Removed since the listing.
        }
        counted += charge(stat.size);
        if (counted >= limit) return true;
        if (!stat.isDirectory()) continue;
        if (level >= depth) return false;
        let inner: number;
        try {
          inner = openSync(child, OPEN_DIRECTORY);
        } catch {
          return false; // Swapped for something else, or gone: find decides.
        }
        try {
          if (!walk(inner, level + 1)) return false;
        } finally {
          closeSync(inner);
        }
        if (counted >= limit) return true;
      }
      return true;
    } finally {
      dir.closeSync();
    }
  };
  let top: number;
  try {
    top = openSync(root, OPEN_DIRECTORY);
  } catch {
    return null;
  }
  try {
    counted = charge(fstatSync(top).size);
    return walk(top, 1) ? counted : null;
  } catch {
    return null;
  } finally {
    closeSync(top);
  }
}

export interface Watched {
  readonly startedAt: number;
  readonly cgroup: CommandCgroup;
  readonly workspace: string | null;
  outputBytes(): number;
}

/**
 * The first limit `watched` has passed, or null. `diskBytes` is the workspace's size as last
 * measured (null: not asked this time); at the limit counts, as RLIMIT_FSIZE stops a file there.
 */
export function limitPassed(
  watched: Watched,
  limits: Limits,
  now: number,
  diskBytes: number | null,
): LimitHit | null {
  if (watched.cgroup.memoryLimitHit()) return "memory_limit";
  if (watched.cgroup.pidsLimitHit()) return "pids_limit";
  if (watched.outputBytes() > limits.outputBytes) return "output_limit";
  if (diskBytes !== null && diskBytes >= limits.diskBytes) return "disk_limit";
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
    const disk = meter !== null && ticks % DISK_EVERY_TICKS === 0 ? meter.poll() : null;
    const hit = limitPassed(watched, limits, Date.now(), disk);
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
