import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { statusTone } from "../../src/console/format";
import { JOB_STATUSES, type JobStatus } from "../../src/domain/schemas";
import type { Resume, ResumeState } from "../../src/domain/state";
import { RESUME_STATE } from "../../src/http/schemas/views";
import { createSession, stubOf, uniqueId } from "../support/api";

// The resume states are written in four places: the union of domain/state.ts, the session table's
// CHECK, the answer schema and the console's tones. The compiler holds these samples to the union
// (one per state, no other); the tests hold the other three to the samples.
const base = {
  reason: "background_exec_completed",
  attempts: 1,
  createdAt: 1_000,
  lastAttemptAt: null,
  lastError: null,
} as const;
const SAMPLES = {
  scheduled: { ...base, resumeId: "rs-1", state: "scheduled", nextAttemptAt: 2_000 },
  delivered: {
    ...base,
    resumeId: "rs-2",
    state: "delivered",
    nextAttemptAt: 2_000,
    deliveredAt: 1_500,
  },
  no_target: { ...base, resumeId: "rs-3", state: "no_target", deliveredAt: null },
  completed: { ...base, resumeId: "rs-4", state: "completed", deliveredAt: 1_500, endedAt: 3_000 },
  failed: { ...base, resumeId: "rs-5", state: "failed", deliveredAt: null, endedAt: 3_000 },
} as const satisfies { [S in ResumeState]: Extract<Resume, { state: S }> };
const RESUME_STATES = Object.values(SAMPLES)
  .map((sample) => sample.state)
  .sort();

/** The table's CREATE statement as SQLite keeps it (the last migration's shape). */
const tableSql = (sid: string, table: string) =>
  runInDurableObject(
    stubOf(sid),
    (_, state) =>
      state.storage.sql
        .exec<{ sql: string }>(
          "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
          table,
        )
        .one().sql,
  );

const refusal = (sid: string, resume: unknown) =>
  runInDurableObject(stubOf(sid), (_, state) => {
    try {
      state.storage.sql.exec("UPDATE session SET resume = ?", JSON.stringify(resume));
      return null;
    } catch (error) {
      return String(error);
    }
  });

describe("every place that lists the states lists the same ones", () => {
  it("the session table's CHECK names exactly the resume states of the union, and accepts each in its shape", async () => {
    const sid = uniqueId("state-list");
    await createSession(sid);
    const named = [...(await tableSql(sid, "session")).matchAll(/WHEN '(\w+)' THEN/g)].map(
      (match) => match[1],
    );
    expect(named.sort()).toEqual(RESUME_STATES);
    for (const sample of Object.values(SAMPLES)) {
      expect(await refusal(sid, sample), sample.state).toBeNull();
    }
    expect(await refusal(sid, { ...SAMPLES.failed, state: "cancelled" })).toMatch(
      /CHECK constraint failed/,
    );
  });

  it("the answer schema accepts exactly the resume states of the union", () => {
    expect([...RESUME_STATE.options].sort()).toEqual(RESUME_STATES);
    expect(RESUME_STATE.safeParse("cancelled").success).toBe(false);
  });

  it("the jobs table's CHECK names exactly the job statuses", async () => {
    const sid = uniqueId("status-list");
    await createSession(sid);
    const check = /status TEXT NOT NULL CHECK \(status IN \(([^)]*)\)\)/.exec(
      await tableSql(sid, "jobs"),
    );
    const named = check?.[1]?.split(",").map((name) => name.trim().replaceAll("'", ""));
    expect(named?.sort()).toEqual([...JOB_STATUSES].sort());
  });

  it("the console has a tone for every resume state and every job status", () => {
    const statuses: readonly (ResumeState | JobStatus)[] = [...RESUME_STATES, ...JOB_STATUSES];
    for (const status of statuses) {
      expect(["red", "amber", "blue", "green"], status).toContain(statusTone(status));
    }
  });
});
