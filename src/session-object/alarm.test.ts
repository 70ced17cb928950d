import { describe, expect, it } from "vitest";
import { PhysicalAlarm } from "./alarm";

/** A storage capability whose setAlarm fails the first `failures` times. */
function flakyStorage(failures: number) {
  const calls: Array<number | null> = [];
  let left = failures;
  const storage = {
    alarm: null as number | null,
    calls,
    async setAlarm(at: number | Date) {
      calls.push(Number(at));
      if (left > 0) {
        left -= 1;
        throw new Error("storage unavailable");
      }
      storage.alarm = Number(at);
    },
    async deleteAlarm() {
      calls.push(null);
      storage.alarm = null;
    },
  };
  return storage;
}

const noSleep = async () => {};

describe("the physical alarm", () => {
  it("a setAlarm that fails is retried until it holds", async () => {
    const storage = flakyStorage(2);
    const due = Date.now() + 60_000;
    await new PhysicalAlarm(storage, noSleep).arm(() => due, false);
    expect(storage.alarm).toBe(due);
    expect(storage.calls).toEqual([due, due, due]);
  });

  it("a setAlarm that keeps failing is thrown, never swallowed, and the next arm tries again", async () => {
    const storage = flakyStorage(10);
    const alarm = new PhysicalAlarm(storage, noSleep);
    const due = Date.now() + 60_000;
    await expect(alarm.arm(() => due, false)).rejects.toThrow("storage unavailable");
    const tries = storage.calls.length;
    expect(tries).toBeGreaterThan(1);
    await expect(alarm.arm(() => due, false)).rejects.toThrow();
    expect(storage.calls.length).toBeGreaterThan(tries);
  });

  it("inside alarm() a due time in the past is pushed past now by the floor", async () => {
    const storage = flakyStorage(0);
    const before = Date.now();
    await new PhysicalAlarm(storage, noSleep).arm(() => before - 1_000, true, 5_000);
    expect(storage.alarm).toBeGreaterThanOrEqual(before + 5_000);
  });

  it("a retried older arm never overwrites a newer due time", async () => {
    const storage = flakyStorage(1);
    const alarm = new PhysicalAlarm(storage, noSleep);
    let due = Date.now() + 6 * 3_600_000; // a wait ceiling hours away
    const first = alarm.arm(() => due, false);
    due = Date.now() + 1_000; // then a resume fell due soon
    await Promise.all([first, alarm.arm(() => due, false)]);
    expect(storage.alarm).toBe(due);
  });
});
