// What a million wakes cost at list prices, from the figures the bench measures per wake.
import { describe, expect, it } from "vitest";
import { PRICE } from "./prices";
import { wakeBill } from "./wake-budget";

const total = (bill: Record<string, number>) => Object.values(bill).reduce((sum, usd) => sum + usd);

describe("the price of a million wakes", () => {
  it("prices every billed unit a wake uses, and only those", () => {
    const bill = wakeBill({
      cpuMs: 2,
      activeMs: 10,
      doRequests: 1.5,
      sqliteRowsRead: 4,
      sqliteRowsWritten: 3,
      d1RowsWritten: 1,
    });
    expect(bill).toEqual({
      "Workers requests": PRICE.workerRequest,
      "Workers CPU": 2 * PRICE.workerCpuMs,
      "DO requests": 1.5 * PRICE.doRequest,
      "DO duration": (10 / 1000) * 0.128 * PRICE.doGbSecond,
      "SQLite rows read": 4 * PRICE.sqliteRowRead,
      "SQLite rows written": 3 * PRICE.sqliteRowWritten,
      "D1 rows written": 1 * PRICE.d1RowWritten,
    });
  });

  it("bills a wake that keeps no object (Workflows) for its request and CPU alone", () => {
    const bill = wakeBill({ cpuMs: 3 });
    expect(Object.keys(bill)).toEqual(["Workers requests", "Workers CPU"]);
    expect(total(bill)).toBeCloseTo(PRICE.workerRequest + 3 * PRICE.workerCpuMs);
  });

  it("makes a row written cost a thousand rows read, as the list prices do", () => {
    const written = total(wakeBill({ cpuMs: 0, sqliteRowsWritten: 1 }));
    const read = total(wakeBill({ cpuMs: 0, sqliteRowsRead: 1000 }));
    expect(written).toBeCloseTo(read);
  });
});
