// The jobs the MCP tools start and poll. A job's handle is the runner's id of its command, except
// when the session already holds a job under that id (a replaced runner numbers its processes
// again): the new job then takes the first free `<id>:<n>`, and the runner's id is kept beside it.
// Which runner may be asked about a job is the domain's (domain/askable.ts).

import { type Askable, askableOf } from "../domain/askable";
import { fail, type Result } from "../domain/errors";
import { ID_PATTERN } from "../domain/schemas";
import { endUntrackedRule } from "../domain/untracked";
import type { JobView } from "../domain/view";
import { getJob, reserveJob } from "./exec-jobs";
import { newId, type SessionLoop } from "./loop";
import { insertMcpJob, readMcpJob } from "./store/mcp-jobs";
import { readRunner } from "./store/runner";

/** How many handles `<id>:2`… are tried before the reservation is refused. */
const MAX_SUFFIX = 64;

type Reserved = ReturnType<typeof reserveJob>;

/**
 * Reserves the job of a command the runner (its `runnerSeq`) started as `runnerId`: never an
 * existing job, since the service asks the runner once per tool call (a held id is a collision).
 * An older job that runner started under the same id is marked superseded in the same step.
 */
export function reserveToolJob(
  loop: SessionLoop,
  cmd: { runnerId: string; command: string; runnerSeq: number },
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
      insertMcpJob(sql, { handle, runnerId: cmd.runnerId, runnerSeq: cmd.runnerSeq }),
    );
    return reserved;
  }
  return fail("job_conflict", `no free handle for the runner's session ID ${cmd.runnerId}`);
}

/** Who may be asked about `job`: the runner's id of it, or why no runner is (the domain decides). */
export const askable = (loop: SessionLoop, job: JobView): Askable =>
  loop.store.read((sql) => askableOf(readMcpJob(sql, job.handle), readRunner(sql)));

/** A job for the tools: the job, and its runner id when the current runner may be asked. */
export function toolJob(
  loop: SessionLoop,
  cmd: { handle: string },
): Result<{ job: JobView } & Askable> {
  const found = getJob(loop, cmd);
  return found.ok
    ? { ok: true, value: { job: found.value, ...askable(loop, found.value) } }
    : found;
}

/**
 * Ends an MCP-started job whose command could not be tracked (its callback was not armed, or its
 * task not stored): `lost`, since no runner will report it and nothing else would end it.
 */
export function endUntrackedJob(loop: SessionLoop, cmd: { handle: string }): Result<null> {
  if (loop.core === null) return fail("not_found", "no such session");
  const started = loop.store.read((sql) => readMcpJob(sql, cmd.handle));
  if (started === null)
    return fail("not_found", `job ${cmd.handle} was not started by the MCP tools`);
  const ended = loop.run(endUntrackedRule, { handle: cmd.handle, resumeId: newId("rs") });
  return ended.ok ? { ok: true, value: null } : ended;
}
