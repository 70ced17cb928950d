import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadSession, persistSession } from "../../src/session-object/store";
import { stubOf, uniqueId } from "../support/api";
import { checkInvariants, commandArb, History } from "../support/history";

describe("storage under random histories", () => {
  it("after every step, what SQLite reloads equals the state the domain decided", async () => {
    await runInDurableObject(stubOf(uniqueId("roundtrip")), (_, state) => {
      const sql = state.storage.sql;
      fc.assert(
        fc.property(
          fc.array(commandArb, { minLength: 1, maxLength: 60, size: "max" }),
          (commands) => {
            persistSession(sql, loadSession(sql), null);
            const history = new History();
            for (const command of [{ t: "create" as const }, ...commands]) {
              const step = history.run(command);
              checkInvariants(history, step);
              state.storage.transactionSync(() => persistSession(sql, step.before, step.after));
              expect(loadSession(sql)).toEqual(step.after);
            }
          },
        ),
        { numRuns: 300, seed: 7 },
      );
    });
  }, 120_000);
});
