// Every field of the core the session object keeps in memory reaches its row, so a field added to
// the core without a column fails here instead of being silently never written.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Core } from "../../src/domain/state";
import { migrate } from "../../src/session-object/migrations";
import {
  DERIVED_CORE_FIELDS,
  loadCore,
  writeCore,
} from "../../src/session-object/store/session-row";
import { applyWrite } from "../../src/session-object/store/writers";
import { stubOf, uniqueId } from "../support/api";

const T0 = 1_700_000_000_000;

/** A core with every field set; typed as the core, so a new field must be added here. */
const SAMPLE: Core = {
  tenant: "acme",
  id: "s1",
  lifetime: "lt-1",
  createdAt: T0,
  resumeUrl: "http://hooks.test/h",
  resumeBinding: "AGENT",
  metadata: { team: "a" },
  messageCount: 0,
  messageBytes: 120,
  jobSeq: 3,
  unacked: 0,
  run: { runId: "run-1", resumeId: "rs-0", registeredAt: T0 },
  wait: { handles: ["h1"], wake: "all", since: T0, ceilingAt: T0 + 60_000 },
  resume: {
    resumeId: "rs-1",
    reason: "background_exec_completed",
    state: "scheduled",
    attempts: 0,
    createdAt: T0,
    nextAttemptAt: T0,
    lastAttemptAt: null,
    lastError: null,
  },
  notifySeq: 2,
  generation: 5,
  livenessDueAt: T0 + 30_000,
};

/** Another value of the same kind, one a JSON column and its CHECK still accept. */
function changed(value: unknown): unknown {
  if (typeof value === "string") return `${value}-b`;
  if (typeof value === "number") return value + 7;
  if (typeof value === "object" && value !== null) return { ...value, changedBy: "test" };
  throw new Error(`the sample core needs a non-null value, got ${String(value)}`);
}

describe("the core's row", () => {
  it("every core field but the counted ones survives a write and a reload on its own", async () => {
    await runInDurableObject(stubOf(uniqueId("core-fields")), (_, state) => {
      const sql = state.storage.sql;
      migrate(sql);
      writeCore(sql, null, SAMPLE);
      expect(loadCore(sql)).toEqual(SAMPLE);
      const derived: readonly string[] = DERIVED_CORE_FIELDS;
      const fields = Object.keys(SAMPLE).filter((field) => !derived.includes(field));
      expect(fields.length + derived.length).toBe(Object.keys(SAMPLE).length);
      for (const field of fields) {
        const before = loadCore(sql) as Core;
        const after = { ...before, [field]: changed(before[field as keyof Core]) } as Core;
        writeCore(sql, before, after);
        expect(loadCore(sql), `core field ${field}`).toEqual(after);
      }
    });
  });

  it("the counted fields come from the rows their writes add", async () => {
    await runInDurableObject(stubOf(uniqueId("core-counted")), (_, state) => {
      const sql = state.storage.sql;
      migrate(sql);
      writeCore(sql, null, SAMPLE);
      applyWrite(sql, {
        type: "insert_message",
        message: { index: 0, role: "user", content: "hi", metadata: {}, createdAt: T0 },
      });
      applyWrite(sql, {
        type: "insert_envelope",
        item: {
          envelope: {
            id: "env-1",
            generation: 1,
            kind: "runtime_instruction",
            source: { type: "runtime", subsystem: "background_exec" },
            body: {
              type: "runtime_instruction",
              instruction: "background_exec_completed",
              data: {},
            },
            created_at: new Date(T0).toISOString(),
            correlation_id: "h1",
          },
          state: "pending",
          leaseExpiresAt: null,
          ackedAt: null,
        },
      });
      expect(loadCore(sql)).toEqual({ ...SAMPLE, messageCount: 1, unacked: 1 });
    });
  });
});
