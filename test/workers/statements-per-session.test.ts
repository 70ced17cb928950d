import { describe, expect, it, vi } from "vitest";
import { MIGRATIONS } from "../../src/session-object/migrations";
import { SCHEMA_SNAPSHOT } from "../../src/session-object/schema-snapshot";
import * as api from "../support/api";

/**
 * The strings a session object runs from its first create to its woken run: workerd keeps each
 * prepared for the object's life, so this is what an open session holds in SQLite heap beyond
 * its connection and schema (docs/benchmarks.md, "Memory per open session object"). A migration
 * after the snapshot adds its own string, and the one that records it, to a new database.
 */
// 13 since full outputs (issue 22): a starting object asks whether a deleted lifetime left parts to
// sweep (output-sweep.ts, `sweepPending`). 16 since the records ring and the quotas (issue 25; the
// test said 13 and failed from that merge on): `SELECT COUNT(*) AS n FROM jobs WHERE completed_at
// IS NULL` (the running-jobs quota), the records ring's last positions (`SELECT COALESCE(MAX(seq),
// 0) AS seq, COALESCE(MAX(ring_seq), -1) AS ring FROM audit_kept`, beside the noise ring's) and its
// write (`REPLACE INTO audit_kept …`). Still 16 with migration 11 (issue 24 item 3): the records
// ring's write, probe, range read and counters read changed in place (a second record per row), the
// session row's write gained a column; a session that also claims and acks runs one string more
// than before (claim and ack have their own UPDATE, docs/decisions.md 821).
const WOKEN_SESSION_STATEMENTS = 16;
const LATER_MIGRATIONS = MIGRATIONS.filter((migration) => migration.id > SCHEMA_SNAPSHOT.id);
const MIGRATION_STATEMENTS = LATER_MIGRATIONS.length + (LATER_MIGRATIONS.length > 0 ? 1 : 0);

describe("what an open session object keeps prepared", () => {
  it("a new session woken once has run 16 distinct SQL strings, no migration's among them", async () => {
    const sid = api.uniqueId("statements");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"))).status).toBe(202);
    await vi.waitFor(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const view = await api.view(sid);
    await api.call("POST", `/v1/sessions/${sid}/runs`, {
      body: { resume_id: view.resume.resume_id },
    });
    const stats = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body;
    expect(stats.sql_statements).toBe(WOKEN_SESSION_STATEMENTS + MIGRATION_STATEMENTS);
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
