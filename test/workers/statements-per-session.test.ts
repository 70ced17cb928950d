import { describe, expect, it, vi } from "vitest";
import { LEFT_PREPARED } from "../../src/session-object/prepared-statements";
import * as api from "../support/api";

/**
 * The strings a session object keeps prepared from its first create to its woken run: workerd keeps
 * each string `exec` ran prepared until its cache of them passes 1 MiB, so this is what an open
 * session holds in SQLite heap beyond its connection and schema (docs/benchmarks.md, "Memory per
 * open session object"). A new database's schema (the snapshot, the migrations after it, the
 * strings that ask for and record them) is released once made (prepared-statements.ts, decision
 * 190): what stays of it is the ten filler `SELECT`s the release leaves.
 */
// 13 since the release (decision 190; 16 before it, of which the schema's question `hasSchema`,
// the snapshot and `INSERT INTO _migrations` are gone, beside the later migrations' own strings).
// 16 then, since the records ring and the quotas (issue 25): `SELECT COUNT(*) AS n FROM jobs WHERE
// completed_at IS NULL` (the running-jobs quota), the records ring's last positions and its write;
// 13 since full outputs (issue 22): a starting object asks whether a deleted lifetime left parts to
// sweep (output-sweep.ts, `sweepPending`). Migration 11 (issue 24 item 3, decisions 820–821)
// changed strings in place: the records ring's write, probe, range read and counters read (a
// second record per row), the session row's write (a column more); a session that also claims and
// acks runs one string more than before (claim and ack have their own UPDATE). 14 since a run id is
// used once per lifetime (issue 31 item 14): registering a run reads its id's `finished_runs` row
// (a session that also finishes a run runs one string more, the row's INSERT).
const WOKEN_SESSION_STATEMENTS = 14;

describe("what an open session object keeps prepared", () => {
  it("a new session woken once keeps 14 SQL strings prepared and none of its schema's", async () => {
    const sid = api.uniqueId("statements");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"))).status).toBe(202);
    await vi.waitFor(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const view = await api.view(sid);
    await api.call("POST", `/v1/sessions/${sid}/runs`, {
      body: { resume_id: view.resume.resume_id },
    });
    const stats = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body;
    expect(stats.sql_statements).toBe(WOKEN_SESSION_STATEMENTS + LEFT_PREPARED.length);
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
