// The session object's schema has one source, its frozen migrations: no table is written out by
// hand anywhere else in the Worker or its tests, so no copy can drift from what databases hold.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const MIGRATIONS = join("src", "session-object", "migrations.ts");
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
  it("no file of the Worker or its tests but the migrations creates a table", () => {
    const files = [...sources("src"), ...sources("test")];
    expect(files).toContain(MIGRATIONS);
    const creating = files.filter(
      (file) => file !== MIGRATIONS && DDL.test(readFileSync(file, "utf8")),
    );
    expect(creating).toEqual([]);
  });
});
