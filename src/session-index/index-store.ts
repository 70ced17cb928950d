// The cross-session index in D1: its schema, conditional upserts by version, and keyset pages.
// What an entry holds is the domain's (index-entry.ts); when to send one is the session object's.
import schemaSql from "../../migrations/0001_session_index.sql";
import type { AttentionStatus, StoredAttention } from "../domain/attention-status";
import type { IndexDetail, IndexEntry } from "../domain/index-entry";

/** The statements of a migration file (its `--` comment lines dropped). */
export const statementsOf = (sql: string): readonly string[] =>
  sql
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("--"))
    .join("\n")
    .split(";")
    .map((statement) => statement.trim())
    .filter((statement) => statement !== "");

/** The statements of the migration file, applied in one batch when a statement finds no table. */
export const SCHEMA_STATEMENTS: readonly string[] = statementsOf(schemaSql);

const isMissingTable = (error: unknown): boolean =>
  error instanceof Error && /no such table/i.test(error.message);

/**
 * Runs `query`; if the index has no schema yet (a fresh local D1, a deployment that skipped the
 * migration), creates it from the migration's `statements` and runs `query` once more.
 */
export async function withSchema<T>(
  db: D1Database,
  query: () => Promise<T>,
  statements: readonly string[] = SCHEMA_STATEMENTS,
): Promise<T> {
  try {
    return await query();
  } catch (error) {
    if (!isMissingTable(error)) throw error;
    await db.batch(statements.map((statement) => db.prepare(statement)));
    return query();
  }
}

/** The columns the partial indexes hold: an entry whose keys are unchanged moves no index entry. */
const sameKeys = (a: IndexEntry, b: IndexEntry): boolean =>
  a.attention === b.attention && a.since === b.since && a.overdueAt === b.overdueAt;

/**
 * Writes `entry` unless the row already holds a newer version or the same content. A quiet entry
 * (no attention needed) only updates a row that exists: a session that never needed attention
 * costs the index nothing. `listed` is what the row is known to hold (the last entry this object
 * wrote): when the keys are the same, only the detail is set, since SQLite rewrites the entry of
 * every index whose column a `SET` names, changed or not (5 rows written → 1). Returns the rows D1
 * wrote.
 */
export async function upsertEntry(
  db: D1Database,
  entry: IndexEntry,
  version: number,
  now: number,
  listed: IndexEntry | null = null,
): Promise<number> {
  const detail = entry.detail === null ? null : JSON.stringify(entry.detail);
  if (entry.attention !== null && listed !== null && sameKeys(entry, listed)) {
    // Guarded by the keys: a row that moved meanwhile (a repair, a delete) takes the full upsert.
    const result = await withSchema(db, () =>
      db
        .prepare(
          `UPDATE session_index SET version = ?3, detail = ?4, indexed_at = ?5
           WHERE tenant = ?1 AND session_id = ?2 AND version < ?3
             AND attention = ?6 AND since IS ?7 AND overdue_at IS ?8`,
        )
        .bind(
          entry.tenant,
          entry.id,
          version,
          detail,
          now,
          entry.attention,
          entry.since,
          entry.overdueAt,
        )
        .run(),
    );
    if ((result.meta.changes ?? 0) > 0) return result.meta.rows_written ?? 0;
  }
  const statement =
    entry.attention === null
      ? db
          .prepare(
            `UPDATE session_index SET version = ?3, attention = NULL, since = NULL,
               overdue_at = NULL, detail = NULL, indexed_at = ?4
             WHERE tenant = ?1 AND session_id = ?2 AND version < ?3 AND attention IS NOT NULL`,
          )
          .bind(entry.tenant, entry.id, version, now)
      : db
          .prepare(
            `INSERT INTO session_index
               (tenant, session_id, version, attention, since, overdue_at, detail, indexed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (tenant, session_id) DO UPDATE SET
               version = excluded.version, attention = excluded.attention,
               since = excluded.since, overdue_at = excluded.overdue_at,
               detail = excluded.detail, indexed_at = excluded.indexed_at
             WHERE excluded.version > session_index.version
               AND (excluded.attention IS NOT session_index.attention
                 OR excluded.since IS NOT session_index.since
                 OR excluded.overdue_at IS NOT session_index.overdue_at
                 OR excluded.detail IS NOT session_index.detail)`,
          )
          .bind(
            entry.tenant,
            entry.id,
            version,
            entry.attention,
            entry.since,
            entry.overdueAt,
            detail,
            now,
          );
  const result = await withSchema(db, () => statement.run());
  return result.meta.rows_written ?? 0;
}

/** A deleted session leaves the index. */
export async function removeEntry(db: D1Database, tenant: string, sessionId: string) {
  await withSchema(db, () =>
    db
      .prepare("DELETE FROM session_index WHERE tenant = ?1 AND session_id = ?2")
      .bind(tenant, sessionId)
      .run(),
  );
}

type IndexRow = {
  tenant: string;
  session_id: string;
  version: number;
  attention: StoredAttention;
  since: number;
  overdue_at: number | null;
  detail: string;
  indexed_at: number;
};

export interface IndexedEntry {
  readonly entry: IndexEntry;
  readonly version: number;
  readonly indexedAt: number;
}

const entryOfRow = (row: IndexRow): IndexedEntry => ({
  entry: {
    tenant: row.tenant,
    id: row.session_id,
    attention: row.attention,
    since: row.since,
    overdueAt: row.overdue_at,
    detail: JSON.parse(row.detail) as IndexDetail,
  },
  version: row.version,
  indexedAt: row.indexed_at,
});

/**
 * Where a page resumes: the sort key of the last row returned. Overdue pages sort by `overdue_at`
 * (longest overdue first); status pages by `since` (oldest first); the unfiltered list by status,
 * then `since`. Tenant and id break ties, so the order is total and a row is never listed twice
 * while it keeps its status.
 */
type Cursor = readonly [string, number, string, string];

export const cursorOf = (status: AttentionStatus | null, indexed: IndexedEntry): Cursor => {
  const { entry } = indexed;
  const key = status === "overdue" ? (entry.overdueAt ?? 0) : (entry.since ?? 0);
  return [entry.attention ?? "", key, entry.tenant, entry.id];
};

export function encodeCursor(cursor: Cursor): string {
  return btoa(JSON.stringify(cursor)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function decodeCursor(text: string): Cursor | null {
  try {
    const value: unknown = JSON.parse(atob(text.replaceAll("-", "+").replaceAll("_", "/")));
    if (!Array.isArray(value) || value.length !== 4) return null;
    const [status, key, tenant, id]: unknown[] = value;
    if (
      typeof status === "string" &&
      typeof key === "number" &&
      Number.isSafeInteger(key) &&
      typeof tenant === "string" &&
      typeof id === "string"
    ) {
      return [status, key, tenant, id];
    }
  } catch {
    // Not base64 or not JSON: not a cursor of ours.
  }
  return null;
}

interface PageQuery {
  readonly status: AttentionStatus | null;
  readonly tenant: string | null;
  readonly limit: number;
  readonly cursor: Cursor | null;
  readonly now: number;
}

/**
 * One page in keyset order, read through the partial indexes of the migration (never OFFSET).
 * A status other than `overdue` leaves out the rows that are overdue at `now`: each listed session
 * appears under exactly one status.
 */
export async function pageEntries(db: D1Database, query: PageQuery): Promise<IndexedEntry[]> {
  const where: string[] = [];
  const binds: unknown[] = [];
  const bind = (value: unknown): string => {
    binds.push(value);
    return `?${binds.length}`;
  };
  const tenant = query.tenant;
  if (tenant !== null) where.push(`tenant = ${bind(tenant)}`);
  const cursor = query.cursor;
  // With the tenant fixed by equality it drops out of the sort key (the index puts it first).
  const tail = tenant === null ? "tenant, session_id" : "session_id";
  const tailBinds = (): string =>
    tenant === null ? `${bind(cursor?.[2])}, ${bind(cursor?.[3])}` : bind(cursor?.[3]);
  let order: string;
  if (query.status === "overdue") {
    where.push(`overdue_at <= ${bind(query.now)}`);
    if (cursor !== null) where.push(`(overdue_at, ${tail}) > (${bind(cursor[1])}, ${tailBinds()})`);
    order = `overdue_at, ${tail}`;
  } else {
    where.push("attention IS NOT NULL");
    if (query.status !== null) {
      where.push(`attention = ${bind(query.status)}`);
      where.push(`(overdue_at IS NULL OR overdue_at > ${bind(query.now)})`);
      if (cursor !== null) where.push(`(since, ${tail}) > (${bind(cursor[1])}, ${tailBinds()})`);
      order = `since, ${tail}`;
    } else {
      if (cursor !== null) {
        where.push(
          `(attention, since, ${tail}) > (${bind(cursor[0])}, ${bind(cursor[1])}, ${tailBinds()})`,
        );
      }
      order = `attention, since, ${tail}`;
    }
  }
  const sql = `SELECT * FROM session_index WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ${bind(query.limit)}`;
  const result = await withSchema(db, () =>
    db
      .prepare(sql)
      .bind(...binds)
      .all<IndexRow>(),
  );
  return result.results.map(entryOfRow);
}

type StatusCounts = Record<AttentionStatus, number>;

/** Sessions per status at `now`, for one tenant or all: an index-only scan of the attention rows. */
export async function countEntries(
  db: D1Database,
  tenant: string | null,
  now: number,
): Promise<StatusCounts> {
  const statement =
    tenant === null
      ? db
          .prepare(
            `SELECT attention, COUNT(*) AS total, COALESCE(SUM(overdue_at <= ?1), 0) AS overdue
             FROM session_index WHERE attention IS NOT NULL GROUP BY attention`,
          )
          .bind(now)
      : db
          .prepare(
            `SELECT attention, COUNT(*) AS total, COALESCE(SUM(overdue_at <= ?1), 0) AS overdue
             FROM session_index WHERE tenant = ?2 AND attention IS NOT NULL GROUP BY attention`,
          )
          .bind(now, tenant);
  const result = await withSchema(db, () =>
    statement.all<{ attention: StoredAttention; total: number; overdue: number }>(),
  );
  const counts: StatusCounts = { suspended: 0, resuming: 0, failed: 0, no_target: 0, overdue: 0 };
  for (const row of result.results) {
    counts[row.attention] += row.total - row.overdue;
    counts.overdue += row.overdue;
  }
  return counts;
}
