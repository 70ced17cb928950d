import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, migrate } from "../../src/session-object/migrations";
import { complete, createSession, reserve, result, stubOf, uniqueId, view } from "../support/api";
import { insertOldRow } from "../support/old-rows";

/** Runs `statement` inside the session's object; the answer is the error message, or null. */
const refusal = (sid: string, statement: string): Promise<string | null> =>
  runInDurableObject(stubOf(sid), (_, state) => {
    try {
      state.storage.sql.exec(statement);
      return null;
    } catch (error) {
      return String(error);
    }
  });

const storedResume = (sid: string) =>
  runInDurableObject(stubOf(sid), (_, state) => {
    const row = state.storage.sql
      .exec<{ resume: string | null }>("SELECT resume FROM session")
      .one();
    return row.resume === null ? null : JSON.parse(row.resume);
  });

describe("the database holds rows to the unions of domain/state.ts", () => {
  it("a job row that is running with a completion time, or finished without one, is refused", async () => {
    const sid = uniqueId("check-job");
    await createSession(sid);
    await reserve(sid, "running");
    const token = (await reserve(sid, "done")).callback.token;
    expect((await complete(sid, "done", token, result(0, "out"))).status).toBe(202);

    for (const statement of [
      "UPDATE jobs SET completed_at = 1 WHERE handle = 'running'",
      "UPDATE jobs SET status = 'completed' WHERE handle = 'running'",
      "UPDATE jobs SET output = 'x' WHERE handle = 'running'",
      "UPDATE jobs SET completed_at = NULL WHERE handle = 'done'",
      "UPDATE jobs SET output = NULL WHERE handle = 'done'",
      "UPDATE jobs SET status = 'running' WHERE handle = 'done'",
      "UPDATE jobs SET status = 'finished' WHERE handle = 'done'",
    ]) {
      expect(await refusal(sid, statement), statement).toMatch(/CHECK constraint failed/);
    }
    // The check refuses only what breaks the union: a change within it goes through.
    expect(await refusal(sid, "UPDATE jobs SET exit_code = 3 WHERE handle = 'done'")).toBeNull();
  });

  it("a resume without its state's fields, or with another state's, is refused", async () => {
    const sid = uniqueId("check-resume");
    await createSession(sid);
    const token = (await reserve(sid, "h1")).callback.token;
    // An idle session wakes at once: the completion schedules a resume (the alarm may deliver it).
    expect((await complete(sid, "h1", token, result(0, "out"))).status).toBe(202);
    const resume = await storedResume(sid);
    expect(["scheduled", "delivered"]).toContain(resume.state);
    expect(resume.nextAttemptAt).toEqual(expect.any(Number));

    for (const change of [
      "json_set(resume, '$.state', 'failed')",
      "json_set(resume, '$.state', 'no_target')",
      "json_set(resume, '$.deliveredAt', 'soon')",
      "json_remove(resume, '$.nextAttemptAt')",
      "json_set(resume, '$.endedAt', 1)",
      "json_set(resume, '$.state', 'lost')",
      "json_set(resume, '$.reason', 'because')",
      "json_remove(resume, '$.resumeId')",
    ]) {
      const statement = `UPDATE session SET resume = ${change}`;
      expect(await refusal(sid, statement), statement).toMatch(/CHECK constraint failed/);
    }
    const failed =
      "json_set(json_remove(resume, '$.nextAttemptAt'), '$.state', 'failed', '$.deliveredAt', json('null'), '$.endedAt', 5)";
    expect(await refusal(sid, `UPDATE session SET resume = ${failed}`)).toBeNull();
  });

  it("rows written before the checks, with every field of every state, upgrade to the union's shape", async () => {
    const sid = uniqueId("check-upgrade");
    const created = await createSession(sid);
    const token = (await reserve(sid, "h1")).callback.token;
    await reserve(sid, "h2");
    expect((await complete(sid, "h1", token, result(0, "kept"))).status).toBe(202);
    await runInDurableObject(stubOf(sid), (_, state) => {
      const sql = state.storage.sql;
      const session = sql.exec("SELECT * FROM session").one();
      const jobs = sql.exec("SELECT * FROM jobs").toArray();
      for (const table of ["session", "jobs", "_migrations"]) sql.exec(`DROP TABLE ${table}`);
      sql.exec(
        "DROP TABLE messages; DROP TABLE inbox; DROP TABLE purged; DROP TABLE audit_events; DROP TABLE finished_runs; DROP TABLE runner; DROP TABLE mcp_tasks; DROP TABLE mcp_jobs",
      );
      migrate(
        sql,
        MIGRATIONS.filter((migration) => migration.id < 6),
      );
      // The old code wrote every field of a resume, nulls included, and a failed one without
      // an end time; a finished job without its byte count.
      const oldResume = {
        resumeId: "rs-old",
        reason: "background_exec_completed",
        state: "failed",
        attempts: 12,
        createdAt: 1_000,
        nextAttemptAt: null,
        lastAttemptAt: 2_000,
        deliveredAt: null,
        lastError: "HTTP 503",
        endedAt: null,
      };
      const sessionRow = { ...session, resume: JSON.stringify(oldResume) };
      insertOldRow(sql, "session", sessionRow);
      for (const job of jobs) {
        insertOldRow(sql, "jobs", job.handle === "h1" ? { ...job, output_bytes_total: null } : job);
      }
    });
    await abortAllDurableObjects();

    expect(await view(sid)).toMatchObject({
      lifetime: created.lifetime,
      status: "idle",
      jobs: { running: 1, done: 1 },
      resume: {
        resume_id: "rs-old",
        state: "failed",
        attempts: 12,
        next_attempt_at: null,
        delivered_at: null,
        last_error: "HTTP 503",
        ended_at: new Date(2_000).toISOString(),
      },
    });
    expect(await storedResume(sid)).not.toHaveProperty("nextAttemptAt");
    const done = await runInDurableObject(stubOf(sid), (_, state) =>
      state.storage.sql.exec("SELECT output_bytes_total FROM jobs WHERE handle = 'h1'").one(),
    );
    expect(done.output_bytes_total).toBe(4);
  });
});
