// Runs a command as the leader of its own session (and process group) and ends everything in that
// session on request. When to end one, and what its exit means, is left to the process table.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { Writable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";

export function spawnInGroup(
  argv: readonly string[],
  workdir: string | undefined,
  env: Record<string, string>,
  /** Bytes the program reads on fd 3 (the sandbox's seccomp filter), if any. */
  fd3: Uint8Array | null = null,
): ChildProcessWithoutNullStreams {
  // detached: setsid, so the shell leads a new session and group whose id is its pid. `sleep | cat`
  // share the group; a job moved to a group of its own (`set -m`) stays in the session. Only a
  // process that calls setsid itself leaves it.
  // --norc: stdin is a socket, which bash takes for rshd and then runs ~/.bashrc unless SHLVL is
  // set (the scrubbed environment has none); a user's rc file must not change what commands do.
  // (launch.ts passes those flags.)
  const [file, ...args] = argv;
  if (file === undefined) throw new Error("spawnInGroup needs a program");
  if (fd3 === null) {
    return spawn(file, args, {
      cwd: workdir,
      env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
  }
  const child = spawn(file, args, {
    cwd: workdir,
    env,
    detached: true,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
  });
  const extra = child.stdio[3] as Writable;
  // A reader that exits before reading (a failed exec) closes it: nothing to report from here.
  extra.on("error", () => {});
  extra.end(fd3);
  return child as unknown as ChildProcessWithoutNullStreams;
}

/**
 * Live (non-zombie) processes whose session id is `sid`, from /proc/<pid>/stat; null where there
 * is no /proc (not Linux). While one of them lives, no new process can be given the number `sid`,
 * so every pid found is a descendant of the command's shell.
 */
export function sessionMembers(sid: number): number[] | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "latin1");
    } catch {
      continue; // Exited since the listing.
    }
    // Field 2, comm, is in parentheses and may itself hold spaces and ')': the fields after it
    // start past the last ')'. There: state (3), ppid (4), pgrp (5), session (6).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pid = Number(entry);
    if (Number(fields[3]) === sid && fields[0] !== "Z" && pid !== process.pid) members.push(pid);
  }
  return members;
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: gone since the scan.
  }
}

/**
 * Signals the group `sid` and every other process of the session `sid`; false when none is left.
 * The group is signalled at once by the kernel (what it forks meanwhile included); the rest one by
 * one, as found in /proc. Without /proc, the group only.
 */
function signalSession(
  sid: number | undefined,
  signal: NodeJS.Signals,
  spareLeader = false,
): boolean {
  if (sid === undefined) return false;
  const members = sessionMembers(sid);
  if (members !== null && members.length === 0) return false;
  if (spareLeader) {
    for (const pid of members ?? []) if (pid !== sid) signalQuietly(pid, signal);
    return true;
  }
  // Only while the session has a member: then the number cannot name someone else's group.
  try {
    process.kill(-sid, signal);
  } catch {
    // ESRCH: the group is empty; its other members may still be in the session.
  }
  for (const pid of members ?? []) signalQuietly(pid, signal);
  return true;
}

const someLeft = (sid: number): boolean => (sessionMembers(sid) ?? [sid]).length > 0;

/**
 * SIGTERM to the command's session (its group included). After `graceMs`, SIGKILL to whatever of
 * the session is left — whether or not it still holds the output pipes — and, if the pipes are
 * still open after another `graceMs`, stop waiting for them: a process that left the session with
 * setsid may hold them for ever, and an exit must not wait on it. Settles when all that is done,
 * early if the command exited and nothing of its session is left.
 *
 * `sandboxed`: the leader is bwrap, which dies at once on SIGTERM and takes the PID namespace with
 * it (SIGKILL to all): SIGTERM then goes to the command's processes only, so they get their grace,
 * and the SIGKILL to bwrap ends everything in the namespace, setsid'd daemons included.
 *
 * `sent` gets each signal before it goes: in the sandbox it is the only evidence that bwrap's exit
 * 128 + N reports a signal rather than the command's own exit code (exit-status.ts).
 */
export async function endSession(
  child: ChildProcessWithoutNullStreams,
  exited: Promise<unknown>,
  graceMs: number,
  sandboxed = false,
  sent: Set<string> = new Set(),
): Promise<void> {
  const sid = child.pid;
  if (sid === undefined) return;
  let over = false;
  const ended = exited.then(() => {
    over = true;
  });
  const startedAt = Date.now();
  sent.add("SIGTERM");
  signalSession(sid, "SIGTERM", sandboxed);
  await Promise.race([ended, delay(graceMs)]);
  if (over && !someLeft(sid)) return;
  // Exited early but left something behind: it still gets the rest of SIGTERM's grace.
  const rest = graceMs - (Date.now() - startedAt);
  if (rest > 0) await delay(rest);
  // Again while something is left: a process may have forked between a scan and its signal.
  sent.add("SIGKILL");
  for (let pass = 0; pass < 5 && signalSession(sid, "SIGKILL"); pass += 1) await delay(20);
  if (over) return;
  await Promise.race([ended, delay(graceMs)]);
  if (over) return;
  child.stdout.destroy();
  child.stderr.destroy();
  child.stdin.destroy();
}
