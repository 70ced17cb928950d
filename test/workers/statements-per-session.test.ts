import { describe, expect, it, vi } from "vitest";
import { MIGRATIONS } from "../../src/session-object/migrations";
import { SCHEMA_SNAPSHOT } from "../../src/session-object/schema-snapshot";
import * as api from "../support/api";

/**
 * The strings a session object keeps prepared from its first create to its woken run: workerd keeps
 * each string `exec` ran prepared for the object's life (until their text passes 1 MiB), so this is
 * what an open session holds in SQLite heap beyond its connection and parsed schema
 * (docs/benchmarks.md, "Memory per open session object").
 */
// The session's own: a starting object's question whether a deleted lifetime left parts to sweep,
// the session row, jobs, inbox, runs, the records ring and the quotas' counts: each a statement
// the session runs on every wake, so each stays prepared for the object's life.
const WOKEN_SESSION_STATEMENTS = 15;
/**
 * What making a new database runs once: whether it has a schema, the snapshot, each migration
 * newer than it, and the one string that records them (migrations.ts, `prepareSchema`).
 */
const SCHEMA_STATEMENTS =
  3 + MIGRATIONS.filter((migration) => migration.id > SCHEMA_SNAPSHOT.id).length;

describe("what an open session object keeps prepared", () => {
  it(`a new session woken once keeps its ${WOKEN_SESSION_STATEMENTS} SQL strings and its schema's ${SCHEMA_STATEMENTS} prepared, nothing else`, async () => {
    const sid = api.uniqueId("statements");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"))).status).toBe(202);
    await vi.waitFor(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const view = await api.view(sid);
    await api.call("POST", `/v1/sessions/${sid}/runs`, {
      body: { resume_id: view.resume.resume_id },
    });
    const stats = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body;
    expect(stats.sql_statements).toBe(WOKEN_SESSION_STATEMENTS + SCHEMA_STATEMENTS);
  });

  it("a second wake of the same session prepares nothing new", async () => {
    const sid = api.uniqueId("statements-again");
    const { tokens } = await api.suspendedOn(sid, ["h1", "h2"], { wake: "any" });
    await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"));
    await vi.waitFor(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const first = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body.sql_statements;
    const view = await api.view(sid);
    const run = await api.call("POST", `/v1/sessions/${sid}/runs`, {
      body: { resume_id: view.resume.resume_id },
    });
    await api.suspend(sid, run.body.run_id, ["h2"]);
    await api.complete(sid, "h2", tokens.h2!, api.result(0, "y"));
    await vi.waitFor(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const second = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body.sql_statements;
    expect(second - first).toBe(0);
  });
});
