// What a stop leaves behind: a program's processes, read from /proc (Linux), and its port. A test
// collects the tree while the program runs, signals the one PID a user holds, and asks what is left.
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** A process, known by its pid and its start time: a pid the kernel reuses is another process. */
export interface Proc {
  readonly pid: number;
  readonly start: string;
  readonly command: string;
}

interface Stat {
  readonly ppid: number;
  readonly state: string;
  readonly start: string;
}

function stat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The name, in parentheses, may hold spaces and ')': the fields follow its last ')'.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", ppid: Number(fields[1]), start: fields[19] ?? "" };
  } catch {
    return undefined; // Gone.
  }
}

function command(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** `pid` and every live process descending from it, as they stand now. */
export function processTree(pid: number): Proc[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const found = stat(Number(entry));
    if (found === undefined) continue;
    children.set(found.ppid, [...(children.get(found.ppid) ?? []), Number(entry)]);
  }
  const tree: Proc[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift() as number;
    const found = stat(next);
    if (found === undefined || found.state === "Z") continue;
    tree.push({ pid: next, start: found.start, command: command(next) });
    queue.push(...(children.get(next) ?? []));
  }
  return tree;
}

/** Those of `procs` still running (a zombie has ended: only its exit status is left to read). */
export function stillRunning(procs: readonly Proc[]): Proc[] {
  return procs.filter((proc) => {
    const now = stat(proc.pid);
    return now !== undefined && now.start === proc.start && now.state !== "Z";
  });
}

/** Whether nobody listens on 127.0.0.1:`port`: a listen there succeeds. */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Lines of a Go panic or deadlock dump, or of a JavaScript stack trace. */
export function stackDump(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => /^fatal error:|^goroutine \d+ \[|^\s+at \S.*:\d+:\d+\)?$/.test(line));
}

export interface Stopped {
  /** How the signalled process ended (null: still running at the deadline). */
  readonly exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Processes of the tree still running at the deadline. */
  readonly left: Proc[];
  readonly portFree: boolean;
}

/**
 * Sends `signal` to `child` alone (not to a group), as `kill <pid>` does, then waits until it has
 * exited, every process of `tree` has ended and `port` is free, or `deadlineMs` has passed.
 */
export async function stopByPid(
  child: ChildProcess,
  tree: readonly Proc[],
  signal: NodeJS.Signals,
  port: number,
  deadlineMs: number,
): Promise<Stopped> {
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    child.once("exit", (code, by) => resolve({ code, signal: by }));
  });
  let exit: Stopped["exit"] = null;
  void exited.then((value) => {
    exit = value;
  });
  process.kill(child.pid as number, signal);
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const left = stillRunning(tree);
    const free = await portFree(port);
    if ((exit !== null && left.length === 0 && free) || Date.now() > deadline)
      return { exit, left, portFree: free };
    await sleep(100);
  }
}

/** For a `finally`: SIGKILL to whatever of `tree` a failed test left running. */
export function killTree(tree: readonly Proc[]): void {
  for (const proc of stillRunning(tree)) {
    try {
      process.kill(proc.pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
}
