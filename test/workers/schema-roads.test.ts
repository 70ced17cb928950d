import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, migrate, prepareSchema } from "../../src/session-object/migrations";
import { SCHEMA_SNAPSHOT } from "../../src/session-object/schema-snapshot";
import * as api from "../support/api";

type MasterRow = { type: string; name: string; tbl_name: string; sql: string | null };

/**
 * The schema as SQLite holds it, with the spelling the two roads differ in taken out: runs of
 * white space, a space inside parentheses, and the quotes `ALTER TABLE … RENAME` puts around a
 * table's name. Column order, types, constraints, CHECKs, indexes and their names all stay.
 */
function schemaOf(sql: SqlStorage): MasterRow[] {
  return sql
    .exec<MasterRow>(
      `SELECT type, name, tbl_name, sql FROM sqlite_master
       WHERE name NOT LIKE '_cf_%' ORDER BY type, name`,
    )
    .toArray()
    .map((row) => ({
      ...row,
      sql:
        row.sql === null
          ? null
          : row.sql
              .replace(/\s+/g, " ")
              .replace(/\( /g, "(")
              .replace(/ \)/g, ")")
              .replace(/ ,/g, ",")
              .replace(/^CREATE TABLE "(\w+)"/, "CREATE TABLE $1"),
    }));
}

const appliedIds = (sql: SqlStorage) =>
  sql
    .exec<{ id: number }>("SELECT id FROM _migrations ORDER BY id")
    .toArray()
    .map((row) => row.id);

/** Runs `work` on the empty storage of an object of its own (one per call). */
function inFreshObject<T>(label: string, work: (sql: SqlStorage) => T): Promise<T> {
  return runInDurableObject(api.stubOf(api.uniqueId(label)), (_, state) =>
    state.storage.transactionSync(() => work(state.storage.sql)),
  );
}

describe("a new database's schema", () => {
  it("a new database gets, from the snapshot, exactly the schema the migrations give an old one", async () => {
    const migrated = await inFreshObject("road-migrations", (sql) => {
      migrate(sql);
      return { schema: schemaOf(sql), applied: appliedIds(sql) };
    });
    const fresh = await inFreshObject("road-snapshot", (sql) => {
      prepareSchema(sql);
      return { schema: schemaOf(sql), applied: appliedIds(sql) };
    });
    expect(fresh.schema).toEqual(migrated.schema);
    // Every migration counts as applied on both roads, so an upgrade later runs only newer ones.
    expect(fresh.applied).toEqual(MIGRATIONS.map((migration) => migration.id));
    expect(migrated.applied).toEqual(fresh.applied);
  });

  it("migrations newer than the snapshot run after it on a new database, as they do on an old one", async () => {
    const newer = [
      ...MIGRATIONS,
      {
        id: Math.max(...MIGRATIONS.map((migration) => migration.id)) + 1,
        description: "a later migration (this test's own)",
        sql: `ALTER TABLE jobs ADD COLUMN note TEXT;
              CREATE INDEX jobs_by_note ON jobs (note) WHERE note IS NOT NULL;`,
      },
    ];
    const migrated = await inFreshObject("later-migrations", (sql) => {
      migrate(sql, newer);
      return schemaOf(sql);
    });
    const fresh = await inFreshObject("later-snapshot", (sql) => {
      prepareSchema(sql, newer);
      return { schema: schemaOf(sql), applied: appliedIds(sql) };
    });
    expect(fresh.schema).toEqual(migrated);
    expect(fresh.schema.find((row) => row.name === "jobs_by_note")).toBeDefined();
    expect(fresh.applied).toEqual(newer.map((migration) => migration.id));
  });

  it("a database that has a schema is migrated, never given the snapshot again, and keeps its rows", async () => {
    await inFreshObject("old-road", (sql) => {
      migrate(sql, MIGRATIONS.slice(0, 4));
      sql.exec(
        `INSERT INTO messages (idx, role, content, metadata, created_at)
         VALUES (0, 'user', '"kept"', '{}', 1)`,
      );
      prepareSchema(sql);
      expect(appliedIds(sql)).toEqual(MIGRATIONS.map((migration) => migration.id));
      expect(sql.exec("SELECT content FROM messages").toArray()).toEqual([{ content: '"kept"' }]);
      expect(schemaOf(sql).find((row) => row.name === "audit")).toBeDefined();
    });
  });

  it("the snapshot stands for a shipped migration: its id is one the list holds", () => {
    expect(MIGRATIONS.map((migration) => migration.id)).toContain(SCHEMA_SNAPSHOT.id);
  });
});
