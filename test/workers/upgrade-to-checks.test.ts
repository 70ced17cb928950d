import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, migrate } from "../../src/session-object/migrations";
import * as api from "../support/api";
import { insertOldRow } from "../support/old-rows";

const CLAIM_TIMEOUT_MS = 10 * 60 * 1000;

type Row = Record<string, SqlStorageValue>;

/**
 * Rewrites the session's rows as the code before migration 6 stored them: `resume` holds every
 * field of every state (nulls included), and `editJob` changes a job row; the next request upgrades.
 */
async function storeAsBeforeChecks(
  sid: string,
  resume: Record<string, unknown>,
  editJob: (job: Row) => Row = (job) => job,
): Promise<void> {
  await runInDurableObject(api.stubOf(sid), (_, state) => {
    const sql = state.storage.sql;
    const session = sql.exec("SELECT * FROM session").one();
    const jobs = sql.exec("SELECT * FROM jobs").toArray();
    for (const table of [
      "session",
      "jobs",
      "_migrations",
      "messages",
      "inbox",
      "purged",
      "audit_events",
      "finished_runs",
      "runner",
      "mcp_tasks",
      "mcp_jobs",
    ]) {
      sql.exec(`DROP TABLE ${table}`);
    }
    migrate(
      sql,
      MIGRATIONS.filter((migration) => migration.id < 6),
    );
    const insert = (table: string, row: Row) => insertOldRow(sql, table, row);
    insert("session", { ...session, resume: JSON.stringify(resume) });
    for (const job of jobs) insert("jobs", editJob(job));
  });
  await abortAllDurableObjects();
}

const oldResume = (state: string, fields: Record<string, unknown> = {}) => ({
  resumeId: `rs-${state}`,
  reason: "background_exec_completed",
  state,
  attempts: 1,
  createdAt: 1_000,
  nextAttemptAt: null,
  lastAttemptAt: 2_000,
  deliveredAt: null,
  lastError: null,
  endedAt: null,
  ...fields,
});

const iso = (ms: number) => new Date(ms).toISOString();

describe("upgrading rows written before the checks keeps every resume state and every job", () => {
  it.each([
    {
      state: "scheduled",
      fields: { deliveredAt: 7, endedAt: 8 },
      expected: { next_attempt_at: iso(1_000), delivered_at: null, ended_at: null },
    },
    {
      state: "no_target",
      fields: { nextAttemptAt: 5, deliveredAt: 3_000, endedAt: 9 },
      expected: { next_attempt_at: null, delivered_at: iso(3_000), ended_at: null },
    },
    {
      state: "completed",
      fields: { nextAttemptAt: 5, deliveredAt: 3_000 },
      expected: { next_attempt_at: null, delivered_at: iso(3_000), ended_at: iso(2_000) },
    },
    {
      state: "failed",
      fields: { nextAttemptAt: 5, endedAt: 4_000 },
      expected: { next_attempt_at: null, delivered_at: null, ended_at: iso(4_000) },
    },
  ])(
    "a $state resume keeps its state and only that state's fields",
    async ({ state, fields, expected }) => {
      const sid = api.uniqueId(`upgrade-${state}`);
      await api.createSession(sid);
      await storeAsBeforeChecks(sid, oldResume(state, fields));
      expect((await api.view(sid)).resume).toMatchObject({
        resume_id: `rs-${state}`,
        state,
        ...expected,
      });
    },
  );

  it("a delivered resume without its next attempt waits the claim timeout from the upgrade, not redelivered at once", async () => {
    const sid = api.uniqueId("upgrade-delivered");
    await api.createSession(sid);
    const before = Date.now();
    await storeAsBeforeChecks(sid, oldResume("delivered", { deliveredAt: 3_000, endedAt: 9 }));
    const resume = (await api.view(sid)).resume;
    expect(resume).toMatchObject({ state: "delivered", delivered_at: iso(3_000), ended_at: null });
    const next = Date.parse(resume.next_attempt_at);
    expect(next).toBeGreaterThanOrEqual(before + CLAIM_TIMEOUT_MS - 1_000);
    expect(next).toBeLessThanOrEqual(Date.now() + CLAIM_TIMEOUT_MS + 60_000);
  });

  it("a finished job without its completion time, reserved long ago, is kept and still pulled", async () => {
    const sid = api.uniqueId("upgrade-old-job");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "old")).callback.token;
    expect((await api.complete(sid, "old", token, api.result(0, "kept"))).status).toBe(202);
    const before = Date.now();
    await storeAsBeforeChecks(sid, oldResume("completed", { endedAt: 2_500 }), (job) => ({
      ...job,
      reserved_at: 1_000,
      completed_at: null,
    }));
    const pulled = await api.call("GET", `/v1/sessions/${sid}/exec-jobs/old`);
    expect(pulled.status).toBe(200);
    expect(pulled.body).toMatchObject({ status: "completed", output: "kept" });
    expect(Date.parse(pulled.body.completed_at)).toBeGreaterThanOrEqual(before - 1_000);
  });

  it("a job an operator marked lost, stored without output or byte count, upgrades as lost", async () => {
    const sid = api.uniqueId("upgrade-lost");
    await api.createSession(sid);
    await api.reserve(sid, "gone");
    await storeAsBeforeChecks(sid, oldResume("completed", { endedAt: 2_500 }), (job) => ({
      ...job,
      status: "lost",
      ended_by: "operator",
      completed_at: null,
    }));
    const pulled = await api.call("GET", `/v1/sessions/${sid}/exec-jobs/gone`);
    expect(pulled.status).toBe(200);
    expect(pulled.body).toMatchObject({
      status: "lost",
      ended_by: "operator",
      output: "",
      output_bytes_total: 0,
    });
    expect((await api.view(sid)).jobs).toMatchObject({ running: 0, done: 1 });
  });
});
