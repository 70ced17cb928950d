// `npm run bench -- statements STATEMENTS.json [BUILT.js]`: the distinct SQL strings one
// new session's object runs from its creation until it waits (create, reserve a job, register a
// run, suspend on it), in the order first run: the input of bench/sql-heap-probe.ts. The build is
// copied with a prelude that logs each string the first time an object's `sql.exec` sees it; the
// service itself is not changed.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { agentClient } from "../test/support/local-stack";
import { startArrivalsHost } from "./lib/arrivals-host";
import { buildWorker, serveExecInbox } from "./lib/miniflare-stack";

// SqlStorage is not a global: its prototype is patched from the first Store's (every object shares
// it), so the strings of an object opened after that are all logged.
const PRELUDE = `const traceSql = (sql) => {
  const proto = Object.getPrototypeOf(sql);
  if (proto.traced) return;
  const seen = new WeakMap();
  const exec = proto.exec;
  proto.traced = true;
  proto.exec = function (query, ...bindings) {
    const strings = seen.get(this) ?? new Set();
    seen.set(this, strings);
    if (!strings.has(query)) {
      strings.add(query);
      console.log("SQLTRACE " + JSON.stringify(query));
    }
    return exec.call(this, query, ...bindings);
  };
};
`;
const HOOK = "var Store = class {\n  constructor(storage, bounds) {\n";

/** A copy of the build in `.bench/traced/` with the prelude first (Miniflare refuses `..`). */
function traced(script: string): string {
  const out = ".bench/traced";
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const from = dirname(script);
  for (const name of readdirSync(from).filter((name) => name.endsWith(".sql"))) {
    writeFileSync(join(out, name), readFileSync(join(from, name)));
  }
  const bundle = readFileSync(script, "utf8");
  if (!bundle.includes(HOOK)) throw new Error(`no Store constructor in ${script}`);
  writeFileSync(
    join(out, "index.js"),
    PRELUDE + bundle.replace(HOOK, `${HOOK}    traceSql(storage.sql);\n`),
  );
  return join(out, "index.js");
}

async function main(): Promise<void> {
  const [out, given] = process.argv.slice(2);
  if (out === undefined) throw new Error("usage: statements STATEMENTS.json [BUILT.js]");
  const script = given ?? buildWorker(".", ".bench/exec-inbox");
  const state = mkdtempSync(join(tmpdir(), "exec-inbox-statements-"));
  const statements: string[] = [];
  const served = await serveExecInbox(traced(script), state);
  const host = await startArrivalsHost();
  try {
    const inbox = agentClient(served.directBase);
    // workerd's output reaches this process's stdout; the strings are picked out of it.
    const original = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      for (const line of String(chunk).split("\n")) {
        const at = line.indexOf("SQLTRACE ");
        if (at >= 0) statements.push(JSON.parse(line.slice(at + 9)) as string);
      }
      return original(chunk, ...rest);
    }) as typeof process.stdout.write;
    // A first session installs the trace; the second's object runs every string under it.
    await inbox.createSession({ id: "statements-warm", resume_url: host.url });
    await new Promise((done) => setTimeout(done, 300));
    statements.length = 0;
    const sid = "statements-0";
    await inbox.createSession({ id: sid, resume_url: host.url });
    await inbox.reserveJob(sid, { handle: "j0", command: "make" });
    const { run_id: runId } = await inbox.registerRun(sid);
    await inbox.suspend(sid, runId, { waiting_for: ["j0"] });
    await new Promise((done) => setTimeout(done, 500));
    process.stdout.write = original;
  } finally {
    await served.stop();
    await host.close();
    rmSync(state, { recursive: true, force: true });
  }
  writeFileSync(out, `${JSON.stringify(statements, null, 1)}\n`);
  console.log(`${statements.length} strings → ${out}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
