import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { oldestRetained } from "../../src/domain/delivery";
import { migrate } from "../../src/session-object/migrations";
import * as store from "../../src/session-object/store";
import { stubOf, uniqueId } from "../support/api";
import { inboxCounts } from "../support/domain";
import { checkInvariants, commandArb, History } from "../support/history";

describe("storage under random histories", () => {
  it("after every step, SQLite holds exactly the whole-session model, and its counts and due times agree", async () => {
    await runInDurableObject(stubOf(uniqueId("roundtrip")), (_, state) => {
      const sql = state.storage.sql;
      migrate(sql);
      fc.assert(
        fc.property(
          fc.array(commandArb, { minLength: 1, maxLength: 60, size: "max" }),
          (commands) => {
            store.persistSession(sql, store.snapshot(sql), null);
            const history = new History();
            for (const command of [{ t: "create" as const }, ...commands]) {
              const step = history.run(command);
              checkInvariants(history, step);
              state.storage.transactionSync(() =>
                store.persistSession(sql, step.before, step.after),
              );
              const model = step.after;
              expect(store.snapshot(sql)).toEqual(model);
              if (model === null) continue;
              // What the object keeps in memory, and what it reads in SQL instead of scanning rows.
              expect(store.loadCore(sql)).toEqual({
                ...model,
                messages: [],
                jobs: {},
                inbox: {},
                purged: {},
              });
              expect(store.oldestRetained(sql)).toBe(oldestRetained(model));
              expect(store.countPending(sql, history.now)).toBe(
                inboxCounts(model, history.now).pending,
              );
            }
          },
        ),
        { numRuns: 300, seed: 7 },
      );
    });
  }, 120_000);
});
