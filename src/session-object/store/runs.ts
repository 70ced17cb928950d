// The ids a lifetime keeps: finished runs (`finished_runs`, so a run never registers twice) and
// purged handles (`purged`, the tombstones that fence a purged job's late callbacks).

import { dict } from "../../domain/records";
import type { Writers } from "./columns";

/** Which of `runIds` finished in this lifetime: one primary-key lookup each. */
export function loadFinishedRuns(
  sql: SqlStorage,
  runIds: readonly string[],
): Record<string, number> {
  const finished = dict<number>();
  for (const runId of new Set(runIds)) {
    const row = sql
      .exec<{ finished_at: number }>(
        "SELECT finished_at FROM finished_runs WHERE run_id = ?",
        runId,
      )
      .toArray()[0];
    if (row !== undefined) finished[runId] = row.finished_at;
  }
  return finished;
}

export function loadTombstones(
  sql: SqlStorage,
  handles: readonly string[],
): Record<string, number> {
  const purged = dict<number>();
  for (const handle of new Set(handles)) {
    const row = sql
      .exec<{ purged_at: number }>("SELECT purged_at FROM purged WHERE handle = ?", handle)
      .toArray()[0];
    if (row !== undefined) purged[handle] = row.purged_at;
  }
  return purged;
}

/** Every finished run and tombstone (tests only). */
export function allRunsAndTombstones(sql: SqlStorage): {
  finishedRuns: Record<string, number>;
  purged: Record<string, number>;
} {
  const purged = dict<number>();
  for (const row of sql.exec<{ handle: string; purged_at: number }>("SELECT * FROM purged"))
    purged[row.handle] = row.purged_at;
  const finishedRuns = dict<number>();
  for (const row of sql.exec<{ run_id: string; finished_at: number }>(
    "SELECT * FROM finished_runs",
  ))
    finishedRuns[row.run_id] = row.finished_at;
  return { finishedRuns, purged };
}

export const RUN_WRITERS: Writers<"insert_finished_run"> = {
  insert_finished_run: (sql, write) => {
    // Never a conflict: a finished id does not register again, so it cannot finish twice.
    sql.exec(
      "INSERT INTO finished_runs (run_id, finished_at) VALUES (?, ?)",
      write.runId,
      write.finishedAt,
    );
  },
};
