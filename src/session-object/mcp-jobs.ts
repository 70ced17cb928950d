// The jobs the MCP tools start and poll. A job's handle is the runner's id of its command, except
// when the session already holds a job under that id (a replaced runner numbers its processes
// again): the new job then takes the first free `<id>:<n>`, and the runner's id is kept beside it.
// Only the runner that started a job is ever asked about it: a replaced runner's ids may name
// another command, even another session's.

import { fail, type Result } from "../domain/errors";
import { ID_PATTERN } from "../domain/schemas";
import type { JobView } from "../domain/view";
import { getJob, reserveJob } from "./exec-jobs";
import type { SessionLoop } from "./loop";
import { insertMcpJob, readMcpJob } from "./store/mcp-jobs";
import { readRunner } from "./store/runner";

/** How many handles `<id>:2`… are tried before the reservation is refused. */
const MAX_SUFFIX = 64;

type Reserved = ReturnType<typeof reserveJob>;

/**
 * Reserves the job of a command the runner (set at `runnerSetAt`) started as `runnerId`: never an
 * existing job, since the service asks the runner once per tool call (a held id is a collision).
 */
export function reserveToolJob(
  loop: SessionLoop,
  cmd: { runnerId: string; command: string; runnerSetAt: number },
): Reserved {
  if (loop.core === null) return fail("not_found", "no such session");
  for (let n = 1; n <= MAX_SUFFIX; n += 1) {
    const handle = n === 1 ? cmd.runnerId : `${cmd.runnerId}:${n}`;
    if (!ID_PATTERN.test(handle)) break;
    // A purged job's handle (its pull says 410) stays taken too.
    const held = getJob(loop, { handle });
    if (held.ok || held.code !== "not_found") continue;
    const reserved = reserveJob(loop, { handle, command: cmd.command });
    if (!reserved.ok) return reserved;
    loop.store.transaction((sql) =>
      insertMcpJob(sql, { handle, runnerId: cmd.runnerId, runnerSetAt: cmd.runnerSetAt }),
    );
    return reserved;
  }
  return fail("job_conflict", `no free handle for the runner's session ID ${cmd.runnerId}`);
}

/**
 * The runner's id of `job` when the session's current runner started it, else null: an
 * MCP-started job by the runner it recorded, a job the REST API reserved by whether it was
 * reserved after the current runner was set.
 */
export function currentRunnerId(loop: SessionLoop, job: JobView): string | null {
  return loop.store.read((sql) => {
    const runner = readRunner(sql);
    if (runner === null) return null;
    const started = readMcpJob(sql, job.handle);
    if (started !== null) return started.runnerSetAt === runner.setAt ? started.runnerId : null;
    return Date.parse(job.reserved_at) >= runner.setAt ? job.handle : null;
  });
}

/** A job for the tools: the job, and its runner id when the current runner may be asked. */
export function toolJob(
  loop: SessionLoop,
  cmd: { handle: string },
): Result<{ job: JobView; runnerId: string | null }> {
  const found = getJob(loop, cmd);
  return found.ok
    ? { ok: true, value: { job: found.value, runnerId: currentRunnerId(loop, found.value) } }
    : found;
}
