// One working directory per agent session under RUNNER_WORK_ROOT, created on first use, so two
// agents' files never meet. Which name a command belongs to is the caller's (exec_command's field).
import { chmodSync, lchownSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { SandboxUser } from "./bwrap";

/** Commands that name no workspace share this one; `@` is outside a session id's charset. */
export const SHARED_WORKSPACE = "@shared";

/** A session id's charset (CONTRACT §2): never a path separator, never `.` or `..`. */
const WORKSPACE_NAME = /^[A-Za-z0-9._:-]{1,128}$/;

export const isWorkspaceName = (name: string): boolean =>
  WORKSPACE_NAME.test(name) && name !== "." && name !== "..";

/** A `workdir` that leaves its workspace: the caller answers 422, and nothing was started. */
export class OutsideWorkspace extends Error {}

/** True when `path` is `root` or below it (both absolute and resolved). */
const within = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel !== ".." && !rel.startsWith(`..${sep}`);
};

/** The real path of what exists of `path` (a symlink inside the workspace may point out of it). */
function realExisting(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export interface Placement {
  /** Its real path: the sandbox binds it there, and the workdir check compares against it. */
  readonly workspace: string;
  readonly cwd: string;
}

/** The first directory on the way to `path` that `user` may not pass through, or null. */
export function blockedOnTheWay(path: string, user: SandboxUser): string | null {
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (stat !== undefined) {
      const bit = stat.uid === user.uid ? 0o100 : stat.gid === user.gid ? 0o010 : 0o001;
      if ((stat.mode & bit) === 0) return dir;
    }
    if (dir === dirname(dir)) return null;
  }
}

/**
 * The workspace directory (created, owner-only, owned by the sandbox's user where there is one)
 * and the command's cwd: `workdir` is read inside it. The work root lets others pass, not list:
 * the sandbox's user must reach its own workspace to bind it.
 */
export function placeCommand(
  workRoot: string,
  name: string | undefined,
  workdir: string | undefined,
  owner: SandboxUser | null = null,
  followLinks = true,
): Placement {
  const chosen = name ?? SHARED_WORKSPACE;
  if (chosen !== SHARED_WORKSPACE && !isWorkspaceName(chosen)) {
    throw new Error(`workspace ${JSON.stringify(chosen)} is not a session id`);
  }
  mkdirSync(workRoot, { recursive: true, mode: 0o711 });
  const workspace = join(realpathSync(workRoot), chosen);
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  if (owner !== null) {
    chmodSync(workRoot, 0o711);
    // Only the directory: what older runners' commands left in it as root stays root's.
    lchownSync(workspace, owner.uid, owner.gid);
  }
  // Relative to the workspace, or absolute inside it; `..` may not lead out of it. Symlinks are
  // followed here only for a command that runs as the runner's user anyway: for a sandboxed one,
  // the runner following them would tell it which of the host's paths exist. The sandbox enters
  // the directory itself and checks where it landed (launch.ts).
  const cwd = workdir === undefined ? workspace : resolve(workspace, workdir);
  const outside = followLinks ? !within(realExisting(workspace), realExisting(cwd)) : false;
  if (!within(workspace, cwd) || outside) {
    throw new OutsideWorkspace(
      `workdir ${JSON.stringify(workdir)} is outside the command's workspace: name a directory inside it`,
    );
  }
  return { workspace, cwd };
}
