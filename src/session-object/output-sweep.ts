// The R2 prefixes of full outputs that outlived their rows (a purged job, a deleted session),
// deleted from the alarm in bounded batches. Deciding what goes is the purge's and the delete's.

import { MIGRATIONS } from "./migrations";

/**
 * The sweep table outlives a wipe, which drops the schema: the migration that made it makes it
 * again (its statements are all IF NOT EXISTS; the outputs table it makes beside it stays empty).
 */
const SWEEP_TABLE = MIGRATIONS.find((migration) => migration.id === 8)?.sql;
/** One R2 list answers at most 1,000 keys, and one delete takes at most 1,000. */
const KEYS_PER_BATCH = 1000;
/** Per alarm invocation: 4,000 objects, 8 R2 operations; the rest waits for the next one. */
export const BATCHES_PER_ALARM = 4;
/** Between two sweeping alarms: time for requests between them. */
export const SWEEP_PAUSE_MS = 100;

type Bucket = Pick<R2Bucket, "list" | "delete">;

/** Whether any prefix waits for its sweep (the table may not exist: no upload ever happened). */
export function sweepPending(sql: SqlStorage): boolean {
  const table = sql
    .exec<{ n: number }>(
      "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'output_sweep'",
    )
    .one().n;
  return table > 0 && sql.exec("SELECT 1 FROM output_sweep LIMIT 1").toArray().length > 0;
}

/**
 * What a session's delete must still sweep: what waited already, and the lifetime's own prefix
 * when any part of it was uploaded. Read before the storage is wiped.
 */
export function prefixesToKeep(sql: SqlStorage, lifetimePrefix: string): string[] {
  if (!sweepPending(sql) && !uploadedAny(sql)) return [];
  const waiting = sweepPending(sql)
    ? sql
        .exec<{ prefix: string }>("SELECT prefix FROM output_sweep")
        .toArray()
        .map((row) => row.prefix)
    : [];
  return uploadedAny(sql) ? [...waiting, lifetimePrefix] : waiting;
}

const uploadedAny = (sql: SqlStorage): boolean =>
  sql
    .exec<{ n: number }>(
      "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'outputs'",
    )
    .one().n > 0 && sql.exec("SELECT 1 FROM outputs LIMIT 1").toArray().length > 0;

/** After the wipe: the prefixes go back into a table of their own, the only storage left. */
export function keepPrefixes(sql: SqlStorage, prefixes: readonly string[]): void {
  if (SWEEP_TABLE === undefined) throw new Error("no migration makes the sweep table");
  sql.exec(SWEEP_TABLE);
  for (const prefix of prefixes) {
    sql.exec("INSERT OR IGNORE INTO output_sweep (prefix) VALUES (?)", prefix);
  }
}

/**
 * Deletes up to `BATCHES_PER_ALARM` batches of objects and forgets each prefix found empty.
 * Returns whether any prefix remains. An upload that lands after its prefix was listed is
 * deleted by its own request, which finds its job gone (http/outputs.ts).
 */
export async function sweepBatches(
  sql: SqlStorage,
  bucket: Bucket,
  transaction: (run: () => void) => void,
): Promise<boolean> {
  for (let batch = 0; batch < BATCHES_PER_ALARM; batch += 1) {
    const next = sql
      .exec<{ prefix: string }>("SELECT prefix FROM output_sweep LIMIT 1")
      .toArray()[0];
    if (next === undefined) return false;
    const listed = await bucket.list({ prefix: next.prefix, limit: KEYS_PER_BATCH });
    if (listed.objects.length > 0) await bucket.delete(listed.objects.map((object) => object.key));
    if (!listed.truncated) {
      transaction(() => sql.exec("DELETE FROM output_sweep WHERE prefix = ?", next.prefix));
    }
  }
  return sql.exec("SELECT 1 FROM output_sweep LIMIT 1").toArray().length > 0;
}
