// Runs a command as the leader of its own process group and ends the whole group on request.
// When to end one, and what its exit means, is left to the process table.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

export function spawnInGroup(
  command: string,
  workdir: string | undefined,
  env: Record<string, string>,
): ChildProcessWithoutNullStreams {
  // detached: the shell leads a new group (and session), so `sleep | cat` and anything it forks
  // share one group id, the shell's pid, and one signal reaches them all.
  // --norc: stdin is a socket, which bash takes for rshd and then runs ~/.bashrc unless SHLVL is
  // set (the scrubbed environment has none); a user's rc file must not change what commands do.
  return spawn("/bin/bash", ["--norc", "--noprofile", "-c", command], {
    cwd: workdir,
    env,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** Signals every process of the group; false when none is left. */
export function signalGroup(pgid: number | undefined, signal: NodeJS.Signals): boolean {
  if (pgid === undefined) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is empty.
  }
}

/**
 * SIGTERM to the group, SIGKILL after `graceMs` if its pipes are still open, and after another
 * `graceMs` stop waiting for the pipes: a process outside the group (one that called setsid)
 * may hold them forever, and an exit must not wait on it.
 */
export function endGroup(
  child: ChildProcessWithoutNullStreams,
  isOver: () => boolean,
  graceMs: number,
): void {
  signalGroup(child.pid, "SIGTERM");
  const kill = setTimeout(() => {
    if (isOver()) return;
    signalGroup(child.pid, "SIGKILL");
    const release = setTimeout(() => {
      if (isOver()) return;
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.destroy();
    }, graceMs);
    release.unref();
  }, graceMs);
  kill.unref();
}
