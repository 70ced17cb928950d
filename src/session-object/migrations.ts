// The ordered, frozen list of schema migrations of a session object's SQLite database, and the
// road a database takes to the newest. A shipped entry is never edited: a change is a new entry
// appended at the end. The list is the schema's only source: a new database runs the snapshot
// generated from it (schema.generated.ts), the same schema in one step.

import { MIGRATION_1 } from "./migrations/001-first-tables";
import { MIGRATION_2 } from "./migrations/002-without-rowid";
import { MIGRATION_3 } from "./migrations/003-job-numbers";
import { MIGRATION_4 } from "./migrations/004-tenant";
import { MIGRATION_5 } from "./migrations/005-audit-ring";
import { MIGRATION_6 } from "./migrations/006-checks";
import { MIGRATION_7 } from "./migrations/007-liveness";
import { MIGRATION_8 } from "./migrations/008-full-outputs";
import { MIGRATION_9 } from "./migrations/009-resume-binding";
import { MIGRATION_10 } from "./migrations/010-audit-records-and-message-bytes";
import { MIGRATION_11 } from "./migrations/011-shared-audit-rows";
import { MIGRATION_12 } from "./migrations/012-finished-runs";
import { MIGRATION_13 } from "./migrations/013-audit-events";
import { MIGRATION_14 } from "./migrations/014-runner";
import { MIGRATION_15 } from "./migrations/015-mcp-tasks";
import { MIGRATION_16 } from "./migrations/016-output-total-known";
import type { Migration } from "./migrations/migration";
import { SCHEMA_SNAPSHOT } from "./schema.generated";
import { tableNames } from "./store/table-names";

export type { Migration };

/** Every migration, in the order they run: one file each under migrations/. */
export const MIGRATIONS: readonly Migration[] = [
  MIGRATION_1,
  MIGRATION_2,
  MIGRATION_3,
  MIGRATION_4,
  MIGRATION_5,
  MIGRATION_6,
  MIGRATION_7,
  MIGRATION_8,
  MIGRATION_9,
  MIGRATION_10,
  MIGRATION_11,
  MIGRATION_12,
  MIGRATION_13,
  MIGRATION_14,
  MIGRATION_15,
  MIGRATION_16,
];

/** True once a session was ever created here (and not deleted since): its schema exists. */
export const hasSchema = (sql: SqlStorage): boolean => tableNames(sql).has("_migrations");

/**
 * What an object finds at start, in one look at the tables: whether a session's schema exists
 * (`hasSchema`), and whether the table of prefixes waiting for their sweep does (outputs.ts). The
 * same string as every other which-tables question, so an object keeps one statement for them.
 */
export function tablesAtStart(sql: SqlStorage): { schema: boolean; sweepTable: boolean } {
  const names = tableNames(sql);
  return { schema: names.has("_migrations"), sweepTable: names.has("output_sweep") };
}

/**
 * Whether a database whose schema exists has every migration applied, so `migrate` has nothing to
 * run: one read at every start, instead of a transaction.
 */
export const isCurrent = (
  sql: SqlStorage,
  migrations: readonly Migration[] = MIGRATIONS,
): boolean => appliedId(sql) >= (migrations.at(-1)?.id ?? 0);

/** Runs, in order, each migration newer than `applied`, recording it. */
function applyAfter(sql: SqlStorage, applied: number, migrations: readonly Migration[]): void {
  for (const migration of migrations) {
    if (migration.id <= applied) continue;
    sql.exec(migration.sql);
    recordApplied(sql, migration.id);
  }
}

const MIGRATIONS_TABLE =
  "CREATE TABLE IF NOT EXISTS _migrations (id INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)";

/**
 * A new database's whole schema in one string: the migrations' record and the snapshot. workerd
 * keeps each string an object runs prepared for its life, so the two in one cost one statement.
 */
const NEW_DATABASE = `${MIGRATIONS_TABLE};\n${SCHEMA_SNAPSHOT.sql}`;

function recordApplied(sql: SqlStorage, id: number): void {
  sql.exec("INSERT INTO _migrations (id, applied_at) VALUES (?, ?)", id, Date.now());
}

const appliedId = (sql: SqlStorage): number =>
  sql.exec<{ id: number }>("SELECT COALESCE(MAX(id), 0) AS id FROM _migrations").one().id;

/**
 * True when the database holds no table but what a deleted session's sweep leaves: the snapshot
 * is for a new database only. Anything else (old tables without `_migrations`) takes the replay
 * road, which fails loudly on a table that exists.
 */
const onlySweepLeft = (tables: ReadonlySet<string>): boolean =>
  [...tables].every(
    (name) => name === "output_sweep" || name === "outputs" || name.startsWith("_cf_"),
  );

/** True when `migrations` begins with every migration the snapshot stands for (a test's list may not). */
const startsWithSnapshot = (migrations: readonly Migration[]): boolean =>
  MIGRATIONS.slice(0, SCHEMA_SNAPSHOT.lastMigrationId).every(
    (shipped, i) => migrations[i] === shipped,
  );

/**
 * The schema up to date. A new database (no `_migrations` table) runs the snapshot and records
 * the migrations it stands for; then each migration newer than what `_migrations` records runs,
 * in order. Run inside one transaction, so a database never keeps half a road. True when the
 * schema was made here and now: its tables are empty.
 */
export function migrate(sql: SqlStorage, migrations: readonly Migration[] = MIGRATIONS): boolean {
  const tables = tableNames(sql);
  if (tables.has("_migrations")) {
    applyAfter(sql, appliedId(sql), migrations);
    return false;
  }
  if (!startsWithSnapshot(migrations) || !onlySweepLeft(tables)) {
    sql.exec(MIGRATIONS_TABLE);
    applyAfter(sql, 0, migrations);
    return true;
  }
  // A deleted session's sweep keeps `output_sweep` (and the empty `outputs` its migration made
  // beside it): the one kept, the other made afresh at the snapshot's shape.
  if (tables.has("outputs")) sql.exec("DROP TABLE outputs");
  sql.exec(NEW_DATABASE);
  for (const migration of MIGRATIONS.slice(0, SCHEMA_SNAPSHOT.lastMigrationId)) {
    recordApplied(sql, migration.id);
  }
  applyAfter(sql, SCHEMA_SNAPSHOT.lastMigrationId, migrations);
  return true;
}
