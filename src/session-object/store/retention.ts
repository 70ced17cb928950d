// Retention over every row: the earliest completion, ack or purge time (the retention timer's),
// kept in memory as the writes move it, and the purge that applies a horizon to every row.

import type { Write } from "../../domain/decision";
import { jobPrefix } from "../../domain/full-output";
import type { Writers } from "./columns";
import { queuePrefix, uploadsCompletedBy } from "./outputs";

/** The SQL twin of the domain's `oldestRetained`: each MIN reads one index entry. */
export function oldestRetained(sql: SqlStorage): number | null {
  const row = sql
    .exec<{ jobs: number | null; acks: number | null; tombs: number | null }>(
      `SELECT (SELECT MIN(completed_at) FROM jobs WHERE completed_at IS NOT NULL) AS jobs,
              (SELECT MIN(acked_at) FROM inbox WHERE acked_at IS NOT NULL) AS acks,
              (SELECT MIN(purged_at) FROM purged) AS tombs`,
    )
    .one();
  const times = [row.jobs, row.acks, row.tombs].filter((time): time is number => time !== null);
  return times.length === 0 ? null : Math.min(...times);
}

/** `oldestRetained` after the writes: a purge reads it again, a completion or an ack can lower it. */
export function retainedAfter(
  retained: number | null,
  writes: readonly Write[],
): number | null | "read again" {
  let next = retained;
  for (const write of writes) {
    const time =
      write.type === "complete_job"
        ? write.job.completedAt
        : write.type === "mark_acked"
          ? write.ackedAt
          : null;
    if (write.type === "purge_before") return "read again";
    if (time !== null) next = next === null ? time : Math.min(next, time);
  }
  return next;
}

/**
 * Applies a retention horizon to every row, as the domain's purge does to the loaded ones. A
 * purged job's parts are swept from R2 by the alarm (output-sweep.ts): its prefix is the domain's
 * `jobPrefix`, queued before its rows go.
 */
function purgeBefore(sql: SqlStorage, horizon: number, now: number): void {
  sql.exec("DELETE FROM purged WHERE purged_at <= ?", horizon);
  sql.exec(
    `INSERT INTO purged (handle, purged_at) SELECT handle, ? FROM jobs WHERE completed_at <= ?
     ON CONFLICT (handle) DO UPDATE SET purged_at = excluded.purged_at`,
    now,
    horizon,
  );
  const uploads = uploadsCompletedBy(sql, horizon);
  if (uploads.length > 0) {
    const session = sql
      .exec<{ tenant: string; id: string }>("SELECT tenant, id FROM session")
      .one();
    for (const job of uploads) {
      queuePrefix(sql, jobPrefix({ tenant: session.tenant, sessionId: session.id, ...job }));
    }
  }
  sql.exec(
    "DELETE FROM outputs WHERE job_seq IN (SELECT seq FROM jobs WHERE completed_at <= ?)",
    horizon,
  );
  // The MCP rows of a purged job go with it: a handle reserved again is never read with them.
  for (const table of ["mcp_jobs", "mcp_tasks"]) {
    sql.exec(
      `DELETE FROM ${table} WHERE handle IN (SELECT handle FROM jobs WHERE completed_at <= ?)`,
      horizon,
    );
  }
  sql.exec("DELETE FROM jobs WHERE completed_at <= ?", horizon);
  sql.exec("DELETE FROM inbox WHERE acked_at <= ?", horizon);
}

export const RETENTION_WRITERS: Writers<"purge_before"> = {
  purge_before: (sql, write) => purgeBefore(sql, write.horizon, write.now),
};
