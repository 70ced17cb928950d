// What the serving processes cost, read from /proc: CPU seconds (utime + stime, fields 14 and 15 of
// /proc/<pid>/stat) and resident memory, for a set of process ids the caller chose.
import { readdirSync, readFileSync } from "node:fs";

/** Kernel clock ticks per second (USER_HZ): 100 on Linux. */
const TICKS_PER_SECOND = 100;

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces: split after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** `root` and every process below it. */
export function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const parent = Number(statFields(pid)?.[1] ?? Number.NaN);
    parents.set(parent, [...(parents.get(parent) ?? []), pid]);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i += 1) tree.push(...(parents.get(tree[i] ?? -1) ?? []));
  return tree;
}

/** The workerd processes this Node process started (Miniflare's). */
export function ownWorkerdPids(): number[] {
  return processTree(process.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd";
    } catch {
      return false;
    }
  });
}

/** CPU seconds used so far by `pids` (user + system). */
export function cpuSeconds(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const fields = statFields(pid);
    // Fields 14 and 15 of the whole line are 12 and 13 after the pid and the name.
    if (fields !== null) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / TICKS_PER_SECOND;
}

/** MiB resident of `pids`. */
export function rssMiB(pids: readonly number[]): number {
  let kib = 0;
  for (const pid of pids) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      kib += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    } catch {
      // Gone.
    }
  }
  return kib / 1024;
}

/** File descriptors open in `pids` (a SQLite-backed object holds three while it is open). */
export function openFiles(pids: readonly number[]): number {
  let count = 0;
  for (const pid of pids) {
    try {
      count += readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      // Gone.
    }
  }
  return count;
}

export function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").trim();
}

/**
 * Waits until `pids` use less than `share` of one core over `windowMs` (background work such as
 * queued index writes has drained), or `timeoutMs` passed. Returns the ms waited.
 */
export async function settle(
  pids: () => readonly number[],
  share = 0.05,
  windowMs = 250,
  timeoutMs = 30_000,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    const before = cpuSeconds(pids());
    await new Promise((done) => setTimeout(done, windowMs));
    const used = (cpuSeconds(pids()) - before) / (windowMs / 1000);
    if (used < share || Date.now() - started > timeoutMs) return Date.now() - started;
  }
}
