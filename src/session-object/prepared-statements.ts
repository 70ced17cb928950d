// Letting go of the SQL strings an object ran once: the schema's, on the day its database is made.
//
// workerd keeps every string `sql.exec` ran prepared, in a cache of its own per object, and only
// evicts from it (least recently used first) once the strings' total length passes 1 MiB
// (`SQL_STATEMENT_CACHE_MAX_SIZE`, src/workerd/api/sql.c++ of workerd 1.20260426.1). An object's own
// strings total a few KiB, so without help the snapshot's CREATEs and the later migrations stay
// prepared for the object's life: ~84 KiB of SQLite heap per object (docs/benchmarks.md, "Memory per
// open session object"), out of the 512 MiB that every object of the process shares.
//
// Eleven strings of 99,900 characters, each one `SELECT` and blanks, push the total past it: the
// cache drops everything older than them, and the first of them. A string can be no longer than
// SQLite's 100,000-byte limit on SQL text that workerd sets (`SQLITE_LIMIT_SQL_LENGTH`); one it
// refuses would stay cached unprepared, its whole text copied, and skip the eviction. What stays is
// the last ten `SELECT`s (~1.4 KiB each): SQLite keeps a statement's text only up to its end, and
// workerd skips the trailing blanks without preparing anything of them (`prepareSql`,
// src/workerd/util/sqlite.c++). The strings are built once per isolate and interned there; an object
// converts each once, when it makes its database, and holds no copy of it.

import { unavailableReason } from "../http/unavailable";

/**
 * workerd's cache of prepared strings evicts once their total length passes this (1 MiB), and
 * SQLite refuses SQL text longer than the other (100,000 bytes), as workerd 1.20260426.1 sets them
 * (the pinned version; an upgrade must read them again). `test/e2e/schema-released.test.ts` reads
 * SQLite's heap to see that the release still frees what it says.
 */
export const WORKERD_LIMITS = { statementCache: 1024 * 1024, sqlText: 100_000 } as const;
const CACHE_LIMIT = WORKERD_LIMITS.statementCache;
const FILLER_LENGTH = WORKERD_LIMITS.sqlText - 100;
export const FILLERS: readonly string[] = Array.from(
  { length: Math.floor(CACHE_LIMIT / FILLER_LENGTH) + 1 },
  (_, index) => `SELECT ${index};`.padEnd(FILLER_LENGTH, " "),
);

/** The strings still prepared right after a release: the fillers the cache had room for. */
export const LEFT_PREPARED: readonly string[] = FILLERS.slice(1);

/** What runs the fillers: an object's `SqlStorage` (its `exec` keeps each string prepared). */
interface Exec {
  exec(query: string): unknown;
}

/**
 * Drops every statement workerd keeps prepared for this object, so the strings run only once (a
 * new database's schema) leave SQLite's heap; the next run of any other string prepares it again.
 * `held`, the object's own list of what it keeps prepared, is brought in line.
 */
export function releasePrepared(sql: Exec, held: Set<string>): void {
  try {
    for (const filler of FILLERS) sql.exec(filler);
  } catch (error) {
    // Storage that cannot serve now (SQLite's heap spent) is what can refuse a `SELECT`: the
    // statements stay prepared, and the request goes on to meet that shortage (or not) where it
    // is answered 503. Anything else is a bug of ours, and says so.
    if (unavailableReason(error) === null) throw error;
    return;
  }
  held.clear();
  for (const filler of LEFT_PREPARED) held.add(filler);
}
