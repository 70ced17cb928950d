// "Never early, never never" (contract §9) over random timelines: a runner heartbeating every
// third of its timeout (retrying failed heartbeats), the service down at random intervals (each
// restart a new isolate, its first event the new `serviceUpSince`), the object closed when idle
// at random points (same isolate), other traffic, and runners that vanish for good. The rules
// are the domain's own (reserve, heartbeat, expireSilent); the simulation is the shell's timing:
// the alarm fires at `livenessDueAt`, or when the service is back if it was down then.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RETRY_BASE_MS, RETRY_MAX_MS } from "../../shared/heartbeat-loop";
import { at, ok, session, T0 } from "../../test/support/domain";
import { overdueFor } from "../../test/support/model-rows";
import { reserveJob } from "./jobs";
import { expireSilent, heartbeat, LATE_CHECK_MS, OVERDUE_PER_ROUND } from "./liveness";
import { own } from "./records";
import type { Session } from "./state";

const RUNS = 10_000;

interface Timeline {
  readonly timeoutMs: number;
  /** Downtimes as [gap since the last one ended, length]. */
  readonly downtimes: ReadonlyArray<readonly [number, number]>;
  /** How long after the service is back an overdue alarm fires. */
  readonly startupMs: number;
  /** When the runner stops for good (null: it never does), as a fraction of the horizon. */
  readonly vanish: number | null;
  /** Other requests and idle closes, as fractions of the horizon. */
  readonly traffic: readonly number[];
  readonly evictions: readonly number[];
}

const timelineArb: fc.Arbitrary<Timeline> = fc.record({
  timeoutMs: fc.integer({ min: 5_000, max: 120_000 }),
  // The service stays up at least 2.5 s between downtimes: time for a retry to get through.
  downtimes: fc.array(
    fc.tuple(fc.integer({ min: 2_500, max: 600_000 }), fc.integer({ min: 50, max: 400_000 })),
    {
      maxLength: 5,
    },
  ),
  startupMs: fc.integer({ min: 0, max: 500 }),
  vanish: fc.option(fc.double({ min: 0, max: 0.9, noNaN: true }), { nil: null }),
  traffic: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
  evictions: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
});

interface Outcome {
  readonly lostAt: number | null;
  readonly lastHeard: number;
  /** Downtime between the runner's last word and the loss (or the horizon). */
  readonly downAfterLastWord: number;
  readonly vanishedAt: number | null;
  readonly horizon: number;
  readonly objectStarts: number;
}

function simulate(line: Timeline): Outcome {
  const T = line.timeoutMs;
  const period = Math.floor(T / 3);
  const down: Array<[number, number]> = [];
  let cursor = T0;
  for (const [gap, length] of line.downtimes) {
    const start = cursor + gap;
    down.push([start, start + length]);
    cursor = start + length;
  }
  const horizon = Math.max(cursor, T0) + 12 * T;
  const span = horizon - T0;
  const isUp = (t: number) => !down.some(([a, b]) => t >= a && t < b);
  const backAt = (t: number) => down.find(([a, b]) => t >= a && t < b)?.[1] ?? t;
  const epochOf = (t: number) => down.filter(([, b]) => b <= t).length;
  const upSince = new Map<number, number>([[0, T0]]);
  /** An event reaching the service at `t` (it must be up): the isolate's first marks its start. */
  const arrive = (t: number) => {
    const epoch = epochOf(t);
    if (!upSince.has(epoch)) upSince.set(epoch, t);
    return upSince.get(epoch) as number;
  };
  // A runner vanishes early enough for its loss to fall inside the horizon.
  const vanishedAt = line.vanish === null ? null : T0 + line.vanish * (span - 4 * T);
  const others = [...line.traffic.map((f) => T0 + f * span)].sort((a, b) => a - b);
  const closes = [...line.evictions.map((f) => T0 + f * span)].sort((a, b) => a - b);

  let state: Session = ok(
    reserveJob(
      session(),
      { handle: "h", command: "run h", callbackToken: "t", heartbeatTimeoutMs: T },
      T0,
    ),
  ).state as Session;
  const lifetime = state.lifetime;
  let lastHeard = T0;
  let nextBeat = T0 + period;
  let failures = 0;
  let lostAt: number | null = null;
  let objectOpen = true;
  let objectStarts = 1;
  const job = () => own(state.jobs, "h");
  const touchObject = () => {
    if (!objectOpen) {
      objectOpen = true;
      objectStarts += 1;
    }
  };

  for (let steps = 0; steps < 200_000 && lostAt === null; steps += 1) {
    const due = state.livenessDueAt;
    const alarmAt =
      due === null ? Number.POSITIVE_INFINITY : isUp(due) ? due : backAt(due) + line.startupMs;
    const beatAt =
      vanishedAt !== null && nextBeat >= vanishedAt ? Number.POSITIVE_INFINITY : nextBeat;
    const otherAt = others[0] ?? Number.POSITIVE_INFINITY;
    const closeAt = closes[0] ?? Number.POSITIVE_INFINITY;
    const t = Math.min(alarmAt, beatAt, otherAt, closeAt);
    if (t > horizon) break;
    if (t === closeAt) {
      closes.shift();
      objectOpen = false;
      continue;
    }
    if (t === otherAt) {
      others.shift();
      if (isUp(t)) arrive(t);
      continue;
    }
    if (t === beatAt) {
      if (!isUp(t)) {
        // The runner's own retry schedule (shared/heartbeat-loop.ts), not a friendlier one.
        failures += 1;
        nextBeat = t + Math.min(period, RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (failures - 1));
        continue;
      }
      failures = 0;
      arrive(t);
      touchObject();
      const beat = heartbeat(state, { lifetime, handle: "h", tokenSeq: 1 }, t);
      if (!beat.ok) break; // the job has a result: the runner stops
      state = beat.state as Session;
      lastHeard = t;
      nextBeat = t + period;
      continue;
    }
    // The alarm: the object starts (again) if it was closed; the isolate is whatever is up now.
    const since = arrive(t);
    touchObject();
    const needs = { overdue: { max: OVERDUE_PER_ROUND } };
    const overdue = overdueFor(state, needs, t);
    if (overdue === null) break;
    const ticked = expireSilent(state, overdue, "rs-1", { ...at(t), serviceUpSince: since });
    state = ticked.session;
    if (ticked.lost.length > 0) lostAt = t;
  }
  const windowEnd = lostAt ?? horizon;
  const downAfterLastWord = down.reduce(
    (sum, [a, b]) => sum + Math.max(0, Math.min(b, windowEnd) - Math.max(a, lastHeard)),
    0,
  );
  expect(job()?.result === null || lostAt !== null).toBe(true);
  return { lostAt, lastHeard, downAfterLastWord, vanishedAt, horizon, objectStarts };
}

describe("liveness under random restarts, idle closes and vanishing runners", () => {
  it("never early: a runner that keeps heartbeating is never declared lost", () => {
    fc.assert(
      fc.property(timelineArb, (line) => {
        const outcome = simulate({ ...line, vanish: null });
        expect(outcome.lostAt).toBeNull();
      }),
      { numRuns: RUNS, seed: 20261201 },
    );
  });

  it("never never: a runner gone for good is declared lost, beyond the downtime at most one timeout late per restart during its silence", () => {
    fc.assert(
      fc.property(timelineArb, fc.double({ min: 0, max: 0.9, noNaN: true }), (line, vanish) => {
        const outcome = simulate({ ...line, vanish });
        const T = line.timeoutMs;
        expect(outcome.lostAt).not.toBeNull();
        const silence = (outcome.lostAt as number) - outcome.lastHeard;
        // Never before a whole timeout of silence; never later than two timeouts of the time the
        // service was up (plus the moment an overdue alarm takes to fire after a restart).
        expect(silence).toBeGreaterThanOrEqual(T);
        // Each restart of the service during the silence may add one grace of a timeout, plus the
        // moment its overdue alarm takes to fire and the lateness that shows it was downtime
        // (LATE_CHECK_MS). Without restarts: exactly one timeout; never postponed for ever.
        const restarts = line.downtimes.filter(([gap]) => gap >= 0).length;
        expect(silence - outcome.downAfterLastWord).toBeLessThanOrEqual(
          T + restarts * (T + line.startupMs + LATE_CHECK_MS),
        );
      }),
      { numRuns: RUNS, seed: 20261202 },
    );
  });

  it("an object closed when idle and started by its own alarm, again and again, declares a silent job lost on time", () => {
    fc.assert(
      fc.property(fc.integer({ min: 5_000, max: 120_000 }), (timeoutMs) => {
        const evictions = Array.from({ length: 6 }, (_, i) => (i + 0.5) / 40);
        const outcome = simulate({
          timeoutMs,
          downtimes: [],
          startupMs: 0,
          vanish: 0,
          traffic: [],
          evictions,
        });
        // No restart: no grace; the loss is exactly one timeout after the reservation.
        expect(outcome.lostAt).toBe(T0 + timeoutMs);
      }),
      { numRuns: Math.min(RUNS, 500) },
    );
  });
});
