// One working directory per agent session under RUNNER_WORK_ROOT, created on first use, so two
// agents' files never meet. Which name a command belongs to is the caller's (exec_command's field).
import { mkdirSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

/** Commands that name no workspace share this one; `@` is outside a session id's charset. */
export const SHARED_WORKSPACE = "@shared";

/** A session id's charset (CONTRACT §2): never a path separator, never `.` or `..`. */
const WORKSPACE_NAME = /^[A-Za-z0-9._:-]{1,128}$/;

export const isWorkspaceName = (name: string): boolean =>
  WORKSPACE_NAME.test(name) && name !== "." && name !== "..";

export interface Placement {
  readonly workspace: string;
  readonly cwd: string;
}

/** The workspace directory (created, owner-only) and the command's cwd: `workdir` is read inside it. */
export function placeCommand(
  workRoot: string,
  name: string | undefined,
  workdir: string | undefined,
): Placement {
  const chosen = name ?? SHARED_WORKSPACE;
  if (chosen !== SHARED_WORKSPACE && !isWorkspaceName(chosen)) {
    throw new Error(`workspace ${JSON.stringify(chosen)} is not a session id`);
  }
  const workspace = join(resolve(workRoot), chosen);
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  const cwd =
    workdir === undefined ? workspace : isAbsolute(workdir) ? workdir : join(workspace, workdir);
  return { workspace, cwd };
}
