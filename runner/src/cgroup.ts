// Per-command cgroup v1 groups (memory, pids) under the runner's own, and what their counters say.
// Joining one is the launcher's (the command's first process writes its pid); killing is not done here.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";

type Controller = "memory" | "pids";

export interface CgroupLimits {
  readonly memoryBytes: number;
  readonly pids: number;
}

/** Where each controller's groups go, or null where it is not mounted or not writable. */
export interface CgroupRoots {
  readonly memory: string | null;
  readonly pids: string | null;
}

function ownPath(controller: Controller): string | null {
  try {
    for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const [, names, path] = line.split(":");
      if (names?.split(",").includes(controller) && path !== undefined) return path;
    }
  } catch {
    // Not Linux.
  }
  return null;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Groups left by a runner that was killed: empty ones go (rmdir refuses a group in use). */
function sweepStale(parent: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(parent).filter(
      (name) => /^exec-inbox-runner-\d+$/.test(name) && !alive(Number(name.slice(18))),
    );
  } catch {
    return;
  }
  for (const name of names) {
    removeTree(join(parent, name));
  }
}

/** A runner's group and its command groups; rmdir refuses any that still holds a process. */
function removeTree(dir: string): void {
  try {
    for (const child of readdirSync(dir, { withFileTypes: true })) {
      if (child.isDirectory()) rmdirSync(join(dir, child.name));
    }
    rmdirSync(dir);
  } catch {
    // A command that outlived the runner (or is still ending): left for the next start's sweep.
  }
}

function rootFor(controller: Controller, runnerName: string): string | null {
  const own = ownPath(controller);
  const mount = `/sys/fs/cgroup/${controller}`;
  if (own === null || !existsSync(mount)) return null;
  const root = join(mount, own, runnerName);
  sweepStale(dirname(root));
  try {
    mkdirSync(root, { recursive: true });
    return root;
  } catch {
    return null; // Not root, or a read-only cgroupfs: the prlimit fallback applies.
  }
}

/** Probes (and creates) the runner's own groups; v2 is not used: its hierarchy here has no controllers. */
export function cgroupRoots(runnerName = `exec-inbox-runner-${process.pid}`): CgroupRoots {
  return { memory: rootFor("memory", runnerName), pids: rootFor("pids", runnerName) };
}

const counter = (file: string, key: string): number => {
  try {
    const line = readFileSync(file, "utf8")
      .split("\n")
      .find((entry) => entry.startsWith(`${key} `));
    return line === undefined ? 0 : Number(line.slice(key.length + 1));
  } catch {
    return 0;
  }
};

export class CommandCgroup {
  readonly memoryDir: string | null;
  readonly pidsDir: string | null;

  constructor(roots: CgroupRoots, name: string, limits: CgroupLimits) {
    this.memoryDir = roots.memory === null ? null : join(roots.memory, name);
    this.pidsDir = roots.pids === null ? null : join(roots.pids, name);
    if (this.memoryDir !== null) {
      mkdirSync(this.memoryDir, { recursive: true });
      writeFileSync(join(this.memoryDir, "memory.limit_in_bytes"), String(limits.memoryBytes));
      // With swap, memory alone would page out instead of ending the command.
      const swap = join(this.memoryDir, "memory.memsw.limit_in_bytes");
      if (existsSync(swap)) writeFileSync(swap, String(limits.memoryBytes));
    }
    if (this.pidsDir !== null) {
      mkdirSync(this.pidsDir, { recursive: true });
      writeFileSync(join(this.pidsDir, "pids.max"), String(limits.pids));
    }
  }

  /** The `cgroup.procs` files the command's first process must join before it execs. */
  get procsFiles(): string[] {
    return [this.memoryDir, this.pidsDir]
      .filter((dir): dir is string => dir !== null)
      .map((dir) => join(dir, "cgroup.procs"));
  }

  /** The kernel's OOM killer ended a process of the command. */
  memoryLimitHit(): boolean {
    return (
      this.memoryDir !== null && counter(join(this.memoryDir, "memory.oom_control"), "oom_kill") > 0
    );
  }

  /** A fork was refused at pids.max: the command is a fork bomb or needs a higher limit. */
  pidsLimitHit(): boolean {
    return this.pidsDir !== null && counter(join(this.pidsDir, "pids.events"), "max") > 0;
  }

  /** Removes the groups; a group still holding a process is kept (rmdir refuses) and retried later. */
  remove(): boolean {
    let removed = true;
    for (const dir of [this.memoryDir, this.pidsDir]) {
      if (dir === null || !existsSync(dir)) continue;
      try {
        rmdirSync(dir);
      } catch {
        removed = false;
      }
    }
    return removed;
  }
}

/** At shutdown: the runner's own groups and what is left under them, where nothing runs. */
export function removeRoots(roots: CgroupRoots): void {
  for (const dir of [roots.memory, roots.pids]) {
    if (dir !== null) removeTree(dir);
  }
}

/** A group still holding a process (a straggler being killed) is retried until it is gone. */
export function removeWhenEmpty(cgroup: CommandCgroup, attempt = 0): void {
  if (cgroup.remove() || attempt >= 20) return;
  setTimeout(() => removeWhenEmpty(cgroup, attempt + 1), 250).unref();
}
