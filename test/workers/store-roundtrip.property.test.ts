import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { oldestRetained } from "../../src/domain/delivery";
import { migrate } from "../../src/session-object/migrations";
import { countPending } from "../../src/session-object/store/inbox";
import * as retention from "../../src/session-object/store/retention";
import { snapshot } from "../../src/session-object/store/rows";
import { loadCore, writeCore } from "../../src/session-object/store/session-row";
import { applyWrite } from "../../src/session-object/store/writers";
import { stubOf, uniqueId } from "../support/api";
import { inboxCounts } from "../support/domain";
import { checkInvariants, commandArb, History } from "../support/history";

/** A deleted session's storage: every table empty (the object's deleteAll drops them). */
const clear = (sql: SqlStorage) => {
  for (const table of ["session", "messages", "jobs", "inbox", "purged", "finished_runs"]) {
    sql.exec(`DELETE FROM ${table}`);
  }
};

describe("storage under random histories", () => {
  it("after every step, SQLite holds exactly the whole-session model, and its counts and due times agree", async () => {
    await runInDurableObject(stubOf(uniqueId("roundtrip")), (_, state) => {
      const sql = state.storage.sql;
      migrate(sql);
      fc.assert(
        fc.property(
          fc.array(commandArb, { minLength: 1, maxLength: 60, size: "max" }),
          (commands) => {
            clear(sql);
            const history = new History();
            for (const command of [{ t: "create" as const }, ...commands]) {
              const step = history.run(command);
              checkInvariants(history, step);
              // What the store's persist does with a step: the core's row, then the writes.
              state.storage.transactionSync(() => {
                if (step.after === null) clear(sql);
                else if (step.after !== step.before) {
                  writeCore(sql, step.before, step.after);
                  for (const write of step.writes) applyWrite(sql, write);
                }
              });
              const model = step.after;
              expect(snapshot(sql)).toEqual(model);
              if (model === null) continue;
              // What the object keeps in memory, and what it reads in SQL instead of scanning rows.
              const {
                messages: _m,
                jobs: _j,
                inbox: _i,
                purged: _p,
                finishedRuns: _f,
                ...core
              } = model;
              expect(loadCore(sql)).toEqual(core);
              expect(retention.oldestRetained(sql)).toBe(oldestRetained(model));
              expect(countPending(sql, history.now)).toBe(inboxCounts(model, history.now).pending);
            }
          },
        ),
        { numRuns: 300, seed: 7 },
      );
    });
  }, 120_000);
});
