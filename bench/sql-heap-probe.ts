// `npx tsx bench/sql-heap-probe.ts STATEMENTS.json`: what each distinct SQL string costs an object
// in SQLite heap once prepared (workerd keeps every string passed to `sql.exec` prepared for the
// object's life). STATEMENTS.json is a JSON array of strings, in the order an object first runs
// them (the first is what a new database runs first: the schema); how they were gathered is the
// caller's (docs/benchmarks.md, "Memory per open session object").
// Each string runs in 40 objects of a probe Worker, one after another; a string that needs bindings
// is prepared, then refused for its missing bindings, which is enough to keep it prepared. The
// string "ABORT" resets the objects (\`ctx.abort()\`): what the next string costs is then what an
// object pays when it opens a database that has its schema.
import { readFileSync } from "node:fs";
import { serveWorker } from "./lib/miniflare-stack";
import { say, table } from "./lib/report";
import { sqliteHeapOf } from "./lib/sqlite-heap";

const OBJECTS = 40;
const KIB = 1024;

const PROBE = `
import { DurableObject } from "cloudflare:workers";
export class Probe extends DurableObject {
  run(query) {
    if (query === "ABORT") this.ctx.abort();
    try { this.ctx.storage.sql.exec(query).toArray(); } catch {}
    return null;
  }
}
export default {
  async fetch(request, env) {
    const { searchParams } = new URL(request.url);
    const stub = env.PROBE.get(env.PROBE.idFromName(searchParams.get("o")));
    try { await stub.run(await request.text()); } catch {}
    return new Response("ok");
  },
};`;

async function main(): Promise<void> {
  const path = process.argv[2];
  if (path === undefined) throw new Error("usage: sql-heap-probe.ts STATEMENTS.json");
  const statements = JSON.parse(readFileSync(path, "utf8")) as string[];
  const served = await serveWorker({
    modules: true,
    script: PROBE,
    compatibilityDate: "2026-11-17",
    durableObjects: { PROBE: { className: "Probe", useSQLite: true } },
  });
  const rows: string[][] = [];
  try {
    const run = async (object: number, query: string) => {
      const answer = await fetch(`${served.directBase}/?o=probe-${object}`, {
        method: "POST",
        body: query,
      });
      await answer.text();
    };
    // An object's opening and its connection: what the first, empty statement costs.
    let before = sqliteHeapOf(served.pids) ?? 0;
    for (let object = 0; object < OBJECTS; object += 1) await run(object, "SELECT 1");
    let after = sqliteHeapOf(served.pids) ?? 0;
    rows.push([
      "(an object opened: the connection, `SELECT 1`)",
      ((after - before) / OBJECTS / KIB).toFixed(1),
    ]);
    let total = 0;
    for (const query of statements) {
      before = after;
      for (let object = 0; object < OBJECTS; object += 1) await run(object, query);
      after = sqliteHeapOf(served.pids) ?? 0;
      const kib = (after - before) / OBJECTS / KIB;
      total += kib;
      const shown = query.replace(/\s+/g, " ").trim();
      rows.push([`\`${shown.length > 90 ? `${shown.slice(0, 87)}…` : shown}\``, kib.toFixed(1)]);
    }
    rows.push(["the statements in all", total.toFixed(1)]);
    say(`### SQLite heap per prepared statement (${OBJECTS} objects each)`);
    table(["statement (in the order first run)", "KiB per object"], rows);
  } finally {
    await served.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
