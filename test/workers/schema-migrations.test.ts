// The frozen migrations are the schema's only source: a new session's database is made from the
// snapshot generated from them (schema.generated.ts) and has exactly the schema replaying them
// gives; an old one runs those it lacks, and each counts as applied once.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, migrate } from "../../src/session-object/migrations";
import * as api from "../support/api";

type MasterRow = { type: string; name: string; tbl_name: string; sql: string | null };

/** The schema as SQLite holds it (SQLite's own tables aside). */
const schemaOf = (sql: SqlStorage): MasterRow[] =>
  sql
    .exec<MasterRow>(
      `SELECT type, name, tbl_name, sql FROM sqlite_master
       WHERE name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%' ORDER BY type, name`,
    )
    .toArray();

const appliedIds = (sql: SqlStorage) =>
  sql
    .exec<{ id: number }>("SELECT id FROM _migrations ORDER BY id")
    .toArray()
    .map((row) => row.id);

/**
 * The replay road: a database made by the first migration alone (too short a list for the
 * snapshot) is then brought up to date like any old one, one migration after the other.
 */
function replayMigrations(sql: SqlStorage, migrations = MIGRATIONS): void {
  migrate(sql, migrations.slice(0, 1));
  migrate(sql, migrations);
}

/** Runs `work` on the empty storage of an object of its own (one per call). */
function inFreshObject<T>(label: string, work: (sql: SqlStorage) => T): Promise<T> {
  return runInDurableObject(api.stubOf(api.uniqueId(label)), (_, state) =>
    state.storage.transactionSync(() => work(state.storage.sql)),
  );
}

describe("a session's schema", () => {
  it("a new session's database has exactly the schema replaying the migrations gives, each recorded as applied", async () => {
    const sid = api.uniqueId("schema-created");
    await api.createSession(sid);
    const created = await runInDurableObject(api.stubOf(sid), (_, state) => ({
      schema: schemaOf(state.storage.sql),
      applied: appliedIds(state.storage.sql),
    }));
    const replayed = await inFreshObject("schema-replayed", (sql) => {
      replayMigrations(sql);
      return { schema: schemaOf(sql), applied: appliedIds(sql) };
    });
    expect(created.schema).toEqual(replayed.schema);
    expect(created.applied).toEqual(MIGRATIONS.map((migration) => migration.id));
    expect(replayed.applied).toEqual(created.applied);
  });

  it("a database whose migration record was emptied beside its tables is refused, never marked current", async () => {
    const outcome = await inFreshObject("schema-emptied", (sql) => {
      migrate(sql, MIGRATIONS.slice(0, 12));
      sql.exec("DELETE FROM _migrations");
      try {
        migrate(sql);
        return { threw: false, applied: appliedIds(sql) };
      } catch (error) {
        return { threw: true, message: String(error) };
      }
    }).catch((error: unknown) => ({ threw: true, message: String(error) }));
    expect(outcome).toMatchObject({ threw: true });
  });

  it("the migrations are numbered 1, 2, 3… in the order they run", () => {
    expect(MIGRATIONS.map((migration) => migration.id)).toEqual(
      MIGRATIONS.map((_, index) => index + 1),
    );
  });

  it("a migration appended later runs on a new database as on an old one", async () => {
    const newer = [
      ...MIGRATIONS,
      {
        id: MIGRATIONS.length + 1,
        description: "a later migration (this test's own)",
        sql: `ALTER TABLE jobs ADD COLUMN note TEXT;
              CREATE INDEX jobs_by_note ON jobs (note) WHERE note IS NOT NULL;`,
      },
    ];
    const upgraded = await inFreshObject("later-upgraded", (sql) => {
      replayMigrations(sql, newer);
      return { schema: schemaOf(sql), applied: appliedIds(sql) };
    });
    const fresh = await inFreshObject("later-fresh", (sql) => {
      migrate(sql, newer);
      return { schema: schemaOf(sql), applied: appliedIds(sql) };
    });
    expect(fresh).toEqual(upgraded);
    expect(fresh.schema.find((row) => row.name === "jobs_by_note")).toBeDefined();
    expect(fresh.applied).toEqual(newer.map((migration) => migration.id));
  });

  it("a database that has a schema runs only the migrations it lacks, and keeps its rows", async () => {
    await inFreshObject("old-schema", (sql) => {
      migrate(sql, MIGRATIONS.slice(0, 4));
      sql.exec(
        `INSERT INTO messages (idx, role, content, metadata, created_at)
         VALUES (0, 'user', '"kept"', '{}', 1)`,
      );
      migrate(sql);
      expect(appliedIds(sql)).toEqual(MIGRATIONS.map((migration) => migration.id));
      expect(sql.exec("SELECT content FROM messages").toArray()).toEqual([{ content: '"kept"' }]);
    });
  });

  it("a finished job stored before output_bytes_total_known existed keeps its row and reads its total as known", async () => {
    await inFreshObject("before-total-known", (sql) => {
      migrate(
        sql,
        MIGRATIONS.filter((migration) => migration.id < 16),
      );
      sql.exec(
        `INSERT INTO jobs (seq, handle, command, lifetime, reserved_at, callback_token, status,
           exit_code, output_truncated, output_bytes_total, ended_by, completed_at, generation, output)
         VALUES (1, 'h1', 'make', 'lt', 1, 't', 'completed', 0, 1, 36, 'process', 2, 1, 'cut')`,
      );
      migrate(sql);
      expect(
        sql.exec("SELECT handle, output_bytes_total, output_bytes_total_known FROM jobs").toArray(),
      ).toEqual([{ handle: "h1", output_bytes_total: 36, output_bytes_total_known: 1 }]);
      expect(() =>
        sql.exec("UPDATE jobs SET output_bytes_total_known = 2 WHERE handle = 'h1'"),
      ).toThrow(/CHECK/);
    });
  });
});
