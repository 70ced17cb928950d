import { describe, expect, it } from "vitest";
import { type AlarmContributor, Scheduler } from "./scheduler";

/** A storage capability that keeps the one alarm it is given. */
function alarmStorage() {
  const storage = {
    alarm: null as number | null,
    async setAlarm(at: number | Date) {
      storage.alarm = Number(at);
    },
    async deleteAlarm() {
      storage.alarm = null;
    },
  };
  return storage;
}

/** A contributor due at `at`, which notes in `ran` when its work runs. */
const contributor = (
  name: string,
  at: number | null,
  ran: string[],
  runsWhilePaused = false,
): AlarmContributor & { at: number | null } => {
  const self = {
    at,
    runsWhilePaused,
    nextAt: () => self.at,
    onAlarm: async () => {
      ran.push(name);
    },
  };
  return self;
};

const schedulerOver = (contributors: AlarmContributor[]) => {
  const storage = alarmStorage();
  const scheduler = new Scheduler({ storage, waitUntil: () => {} }, contributors);
  return { storage, scheduler };
};

describe("the scheduler of the one physical alarm", () => {
  it("sets the alarm to the earliest time any contributor gives, and deletes it when none gives one", async () => {
    const now = Date.now();
    const late = contributor("late", now + 60_000, []);
    const soon = contributor("soon", now + 5_000, []);
    const idle = contributor("idle", null, []);
    const { storage, scheduler } = schedulerOver([late, soon, idle]);
    await scheduler.arm();
    expect(storage.alarm).toBe(now + 5_000);
    soon.at = null;
    await scheduler.arm();
    expect(storage.alarm).toBe(now + 60_000);
    late.at = null;
    await scheduler.arm();
    expect(storage.alarm).toBeNull();
  });

  it("when the alarm fires, runs every contributor's work in the order given, counts the alarm and sets it again past now", async () => {
    const ran: string[] = [];
    const before = Date.now();
    const first = contributor("first", before - 1_000, ran);
    const second = contributor("second", null, ran);
    const third = contributor("third", before - 1_000, ran, true);
    const { storage, scheduler } = schedulerOver([first, second, third]);
    await scheduler.fired(false);
    expect(ran).toEqual(["first", "second", "third"]);
    expect(scheduler.alarms).toBe(1);
    // A time already past is pushed past now: one at or before now can be dropped inside alarm().
    expect(storage.alarm).toBeGreaterThan(before - 1_000);
    expect(storage.alarm).toBeGreaterThanOrEqual(before);
  });

  it("while settings are refused, runs only the work that steers no delivery and looks again later", async () => {
    const ran: string[] = [];
    const before = Date.now();
    const timers = contributor("timers", before - 1_000, ran);
    const sweep = contributor("sweep", null, ran, true);
    const { storage, scheduler } = schedulerOver([timers, sweep]);
    await scheduler.fired(true);
    expect(ran).toEqual(["sweep"]);
    // Not at once: the due timer cannot run until the settings are fixed.
    expect(storage.alarm).toBeGreaterThanOrEqual(before + 15_000);
  });

  it("a contributor whose work or whose next time throws keeps neither the others' work nor their times from the alarm", async () => {
    const now = Date.now();
    const ran: string[] = [];
    const broken: AlarmContributor = {
      nextAt: () => {
        throw new Error("SQLITE_NOMEM");
      },
      onAlarm: async () => {
        throw new Error("SQLITE_NOMEM");
      },
    };
    const later = contributor("later", now + 60_000, ran);
    const { storage, scheduler } = schedulerOver([broken, later]);
    await scheduler.arm();
    // The broken one is asked again within seconds; the other's time is not lost meanwhile.
    expect(storage.alarm).not.toBeNull();
    expect(storage.alarm as number).toBeLessThanOrEqual(Date.now() + 1_000);
    later.at = now - 1;
    await scheduler.fired(false);
    expect(ran).toEqual(["later"]);
    expect(storage.alarm).not.toBeNull();
    // Not at once: a fault that persists must not spin the alarm.
    expect(storage.alarm as number).toBeGreaterThanOrEqual(now + 1_000);
  });

  it("an alarm time past what a Date can hold is no time at all", async () => {
    const { storage, scheduler } = schedulerOver([contributor("far", Number.MAX_SAFE_INTEGER, [])]);
    await scheduler.arm();
    expect(storage.alarm).toBeNull();
  });
});
