// Who may be asked about a job the MCP tools started: only the runner that started it, and only
// while its id still names that job. A replaced runner's ids may name another command, even another
// session's; a job the REST API reserved was started by a runner the session may not name at all.

/** Why a running job's runner is not asked about it. */
export type Unasked = "no_runner" | "not_started_here" | "replaced" | "superseded";

/** Who may be asked about a job: the runner's id of it, or why no runner is. */
export type Askable = { runnerId: string; unasked: null } | { runnerId: null; unasked: Unasked };

/**
 * `started`: what the endpoint recorded when it started the job (null: it did not start it);
 * `runner`: the runner the session names now (null: none).
 */
export function askableOf(
  started: { runnerId: string; runnerSeq: number; superseded: boolean } | null,
  runner: { seq: number } | null,
): Askable {
  if (started === null) return { runnerId: null, unasked: "not_started_here" };
  if (runner === null) return { runnerId: null, unasked: "no_runner" };
  if (started.runnerSeq !== runner.seq) return { runnerId: null, unasked: "replaced" };
  if (started.superseded) return { runnerId: null, unasked: "superseded" };
  return { runnerId: started.runnerId, unasked: null };
}
