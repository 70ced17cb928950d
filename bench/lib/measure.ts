// The two phases every cell is measured in: sequential (one call at a time, for latency) and
// concurrent (a fixed number in flight, for rates, CPU and memory), each after a warm-up.
import { setTimeout as sleep } from "node:timers/promises";
import { wallNow } from "./arrivals-host";
import { cpuSeconds, rssMiB, settle } from "./proc";
import { percentile } from "./stats";
import { pool, type WakeSystem } from "./wake-systems";

export type Figures = Record<string, number>;

/** p50 and p99 of `samples` sequential calls, and the rate of `rateCount` calls at `concurrency`. */
export async function floorOf(
  call: () => Promise<void>,
  samples: number,
  rateCount: number,
  concurrency: number,
  pids: () => readonly number[],
): Promise<{ p50: number; p99: number; rate: number; cpuPer1000: number }> {
  for (let i = 0; i < 50; i += 1) await call();
  const latencies: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const t0 = performance.now();
    await call();
    latencies.push(performance.now() - t0);
  }
  const cpuBefore = cpuSeconds(pids());
  const started = performance.now();
  await pool(Array.from({ length: rateCount }), concurrency, () => call());
  const rate = rateCount / ((performance.now() - started) / 1000);
  const cpuPer1000 = ((cpuSeconds(pids()) - cpuBefore) / rateCount) * 1000;
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rate, cpuPer1000 };
}

/**
 * Wakes sessions one at a time, each after the previous one resumed: send → accepted and
 * send → resumed. The warm-up sessions are woken the same way and not counted.
 */
/** Waits out the work a system still does after its last resume (the rates are already taken). */
async function deferredWork(system: WakeSystem): Promise<void> {
  if (system.deferredMs === undefined) return;
  await sleep(system.deferredMs);
  await settle(system.pids);
}

export async function sequentialWakes(
  system: WakeSystem,
  samples: number,
  warmup: number,
): Promise<Figures> {
  const keys = await system.prepare("seq", samples + warmup);
  // Work the preparation left queued (index writes, instance start-up) is not the wakes' cost.
  await settle(system.pids);
  const accepted: number[] = [];
  const resumed: number[] = [];
  for (const [i, key] of keys.entries()) {
    const t0 = wallNow();
    await system.wake(key);
    const t1 = wallNow();
    const at = await system.resumedAt(key);
    if (i < warmup) continue;
    accepted.push(t1 - t0);
    resumed.push(at - t0);
  }
  await deferredWork(system);
  return {
    samples: accepted.length,
    "accept p50": percentile(accepted, 50),
    "accept p99": percentile(accepted, 99),
    "wake p50": percentile(resumed, 50),
    "wake p99": percentile(resumed, 99),
  };
}

/**
 * Wakes `count` waiting sessions with `concurrency` sends in flight: results accepted per second,
 * sessions resumed per second (first send → last resume), the serving processes' CPU per 1,000
 * wakes, and their resident memory per 1,000 sessions waiting (read before and after preparing).
 */
export async function concurrentWakes(
  system: WakeSystem,
  count: number,
  concurrency: number,
): Promise<Figures> {
  const warm = await system.prepare("warm", concurrency * 2);
  await pool(warm, concurrency, (key) => system.wake(key));
  await Promise.all(warm.map((key) => system.resumedAt(key)));
  // What the warm-up wakes do later (exec-inbox's held index entries, 5 s on) is not the measured
  // wakes' cost: it would land in their window and be counted as theirs.
  await deferredWork(system);
  const rssBefore = rssMiB(system.pids());
  const keys = await system.prepare("conc", count);
  await settle(system.pids);
  const rssAfter = rssMiB(system.pids());
  const cpuBefore = cpuSeconds(system.pids());
  const clientBefore = process.cpuUsage();
  const t0 = wallNow();
  await pool(keys, concurrency, (key) => system.wake(key));
  const acceptedAt = wallNow();
  const resumedAt = Math.max(...(await Promise.all(keys.map((key) => system.resumedAt(key)))));
  await deferredWork(system);
  const cpu = cpuSeconds(system.pids()) - cpuBefore;
  const client = process.cpuUsage(clientBefore);
  return {
    "accept rate": count / ((acceptedAt - t0) / 1000),
    "wake rate": count / ((resumedAt - t0) / 1000),
    "cpu per 1000": (cpu / count) * 1000,
    "client cpu per 1000": ((client.user + client.system) / 1e6 / count) * 1000,
    "rss per 1000": ((rssAfter - rssBefore) / count) * 1000,
  };
}
