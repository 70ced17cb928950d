// The session object's schema has one source, its frozen migrations: no table is written out by
// hand anywhere else in the Worker or its tests, so no copy can drift from what databases hold.
// The one other file that creates tables is the snapshot generated from the migrations.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** One file a migration, each frozen once shipped, and the runner that lists them. */
const MIGRATIONS = join("src", "session-object", "migrations");
const RUNNER = join("src", "session-object", "migrations.ts");
const GENERATED = join("src", "session-object", "schema.generated.ts");
const GENERATOR = join("scripts", "schema-snapshot.mjs");
const DDL = new RegExp(["CREATE", "TABLE"].join("\\s+"), "i");

/** Every TypeScript file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe("the schema's source", () => {
  it("no file of the Worker or its tests but the migrations and their generated snapshot creates a table", () => {
    const files = [...sources("src"), ...sources("test")];
    const migrations = files.filter((file) => file.startsWith(`${MIGRATIONS}/`));
    expect(migrations.length).toBeGreaterThan(1);
    expect(files).toContain(GENERATED);
    const creating = files.filter(
      (file) =>
        !migrations.includes(file) &&
        file !== RUNNER &&
        file !== GENERATED &&
        DDL.test(readFileSync(file, "utf8")),
    );
    expect(creating).toEqual([]);
  });

  it("the committed schema snapshot is what the generator writes from the migrations now", () => {
    const generated = execFileSync(process.execPath, ["--import", "tsx", GENERATOR, "--print"], {
      encoding: "utf8",
    });
    const committed = existsSync(GENERATED) ? readFileSync(GENERATED, "utf8") : "";
    expect(committed, `run \`npx tsx ${GENERATOR}\` and commit ${GENERATED}`).toBe(generated);
  });
});
