import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { mintCallbackToken } from "../../src/auth/callback-token";
import { MIGRATIONS, migrate } from "../../src/session-object/migrations";
import * as api from "../support/api";
import { insertOldRow } from "../support/old-rows";
import { CALLBACK_SECRET_NEW, CALLBACK_SECRET_OLD, OPERATOR_TOKEN } from "../support/secrets";

const OLD_SECRET = CALLBACK_SECRET_OLD;
/** Columns revision 2 added; a database of the old shape has none of them. */

describe("upgrading a session stored by revision 1", () => {
  it("a database of migration 1 upgrades in place: every row kept, jobs numbered in reservation order, old tokens still work", async () => {
    const sid = api.uniqueId("upgrade");
    const created = await api.createSession(sid);
    const legacy = (handle: string) =>
      mintCallbackToken(OLD_SECRET, {
        tenant: "default",
        sessionId: sid,
        lifetime: created.lifetime,
        handle,
        seq: null,
      });
    for (const handle of ["h1", "h2", "h3", "gone"]) await api.reserve(sid, handle);
    await api.complete(
      sid,
      "h1",
      (await api.reserve(sid, "h1")).callback.token,
      api.result(0, "kept"),
    );
    for (const text of ["first", "second"]) {
      await api.call("POST", `/v1/sessions/${sid}/messages`, {
        body: { role: "user", content: text },
      });
    }
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      const sql = state.storage.sql;
      const rows = (table: string) => sql.exec(`SELECT * FROM ${table}`).toArray();
      const saved = Object.fromEntries(
        ["session", "messages", "jobs", "inbox"].map((table) => [table, rows(table)]),
      );
      // Rebuild revision 1's first shape holding the same rows, with revision 1's tokens.
      for (const { name } of sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'",
        )
        .toArray()) {
        sql.exec(`DROP TABLE ${name}`);
      }
      migrate(sql, MIGRATIONS.slice(0, 1));
      for (const [table, list] of Object.entries(saved)) {
        for (const row of list) {
          if (table === "jobs" && String(row.handle) === "gone") continue;
          // Revision 1's own tokens; columns added since are left out (insertOldRow).
          insertOldRow(
            sql,
            table,
            table === "jobs" ? { ...row, callback_token: legacy(String(row.handle)) } : row,
          );
        }
      }
      // A job purged under revision 1 left a tombstone.
      sql.exec("INSERT INTO purged (handle, purged_at) VALUES ('gone', ?)", Date.now());
    });
    await abortAllDurableObjects();

    const upgraded = await api.view(sid);
    expect(upgraded).toMatchObject({
      tenant: "default",
      lifetime: created.lifetime,
      message_count: 2,
      jobs: { running: 2, done: 1 },
      inbox: { pending: 1, claimed: 0, generation: 1 },
    });
    const messages = (await api.call("GET", `/v1/sessions/${sid}/messages`)).body;
    expect(messages.messages.map((message: { content: string }) => message.content)).toEqual([
      "first",
      "second",
    ]);
    const listed = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs`)).body;
    expect(listed.jobs.map((job: { handle: string }) => job.handle)).toEqual(["h1", "h2", "h3"]);
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.output).toBe("kept");

    // A runner holding a revision-1 token is not stranded by the upgrade.
    expect((await api.reserve(sid, "h2")).callback.token).toBe(legacy("h2"));
    expect(
      (await api.complete(sid, "h2", legacy("h2"), api.result(0, "after upgrade"))).status,
    ).toBe(202);
    const gone = await api.complete(sid, "gone", legacy("gone"), api.result(0, "late"));
    expect([gone.status, gone.body.code]).toEqual([410, "job_expired"]);
    // New reservations continue the numbering: their tokens bind the next seq.
    const fresh = await api.reserve(sid, "h4");
    expect(fresh.callback.token).toBe(
      mintCallbackToken(CALLBACK_SECRET_NEW, {
        tenant: "default",
        sessionId: sid,
        lifetime: created.lifetime,
        handle: "h4",
        seq: 4,
      }),
    );
  });

  it("an object revision 1 deleted (its tables kept, no session) is wiped when it next starts", async () => {
    const sid = api.uniqueId("old-deleted");
    await api.createSession(sid);
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      for (const table of ["session", "messages", "jobs", "inbox", "purged"]) {
        state.storage.sql.exec(`DELETE FROM ${table}`);
      }
    });
    await abortAllDurableObjects();
    expect((await api.call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      const tables = state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'")
        .toArray();
      expect(tables).toEqual([]);
    });
  });
});

describe("upgrading a trail stored in two rings", () => {
  it("keeps every event, seq for seq: the noise ring's, the records ring's with a row's second event, and the record held in the session row", async () => {
    const sid = api.uniqueId("upgrade-trail");
    await api.createSession(sid);
    const now = Date.now();
    const event = (seq: number, type: string, detail: object) => ({
      seq,
      at: now - 1_000 + seq,
      type,
      detail: JSON.stringify(detail),
    });
    const noise = [
      event(1, "run_registered", { run_id: "r1", resume_id: null }),
      event(4, "claim", { count: 1, ids: ["e1"] }),
    ];
    const first = event(2, "completion", {
      handle: "h1",
      outcome: "accepted",
      disposition: "resume_scheduled",
    });
    const second = event(3, "delivery", {
      resume_id: "rs1",
      attempt: 1,
      status: 200,
      error: null,
      duration_ms: 5,
    });
    const own = event(5, "operator", { action: "mark_lost", handle: "h2" });
    const held = event(6, "completion", {
      handle: "h3",
      outcome: "accepted",
      disposition: "queued",
    });
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      const sql = state.storage.sql;
      const session = sql.exec("SELECT * FROM session").one();
      for (const { name } of sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'",
        )
        .toArray()) {
        sql.exec(`DROP TABLE ${name}`);
      }
      // The shape the two rings had: migrations 1–12.
      migrate(
        sql,
        MIGRATIONS.filter((migration) => migration.id <= 12),
      );
      insertOldRow(sql, "session", { ...session, audit_held: JSON.stringify(held) });
      for (const [position, row] of noise.entries()) {
        sql.exec(
          "INSERT INTO audit (slot, ring_seq, seq, at, type, detail) VALUES (?, ?, ?, ?, ?, ?)",
          position,
          position,
          row.seq,
          row.at,
          row.type,
          row.detail,
        );
      }
      sql.exec(
        `INSERT INTO audit_kept (slot, ring_seq, seq, at, type, detail, second)
         VALUES (0, 0, ?, ?, ?, ?, ?), (2, 2, ?, ?, ?, ?, NULL)`,
        first.seq,
        first.at,
        first.type,
        first.detail,
        JSON.stringify(second),
        own.seq,
        own.at,
        own.type,
        own.detail,
      );
    });
    await abortAllDurableObjects();

    const answer = await api.call("GET", `/v1/ops/sessions/default/${sid}/events?limit=500`, {
      token: OPERATOR_TOKEN,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      events: [...noise, first, second, own, held]
        .sort((a, b) => a.seq - b.seq)
        .map((row) => ({
          seq: row.seq,
          at: new Date(row.at).toISOString(),
          type: row.type,
          ...JSON.parse(row.detail),
        })),
      next_after: null,
    });
    // The next event takes the next seq; the rings and the held record's column are gone.
    await api.reserve(sid, "h9");
    const runId = await api.registerRun(sid);
    const after = await api.call("GET", `/v1/ops/sessions/default/${sid}/events?after=6`, {
      token: OPERATOR_TOKEN,
    });
    expect(after.body.events).toMatchObject([{ seq: 7, type: "run_registered", run_id: runId }]);
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      const sql = state.storage.sql;
      const tables = sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE name LIKE 'audit%'")
        .toArray()
        .map((row) => row.name);
      expect(tables).toEqual(["audit_events"]);
      const columns = sql
        .exec<{ name: string }>("SELECT name FROM pragma_table_info('session')")
        .toArray()
        .map((row) => row.name);
      expect(columns).not.toContain("audit_held");
    });
  });
});
