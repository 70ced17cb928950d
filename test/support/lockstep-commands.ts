// The random commands a lockstep run applies to the model and the object alike, and the settings
// they run under. Applying them is left to the Lockstep (object-driver.ts).

import { env } from "cloudflare:workers";
import fc from "fast-check";
import { readConfig } from "../../src/domain/config";
import type { Ctx } from "../../src/domain/decision";
import type { Session, Wake } from "../../src/domain/state";
import { resultOf } from "./history";

export const HANDLES = ["a", "b"] as const;

/** The object's own configuration: the model's timers run with it when the rows are aged. */
export const CONFIG: Ctx["config"] = readConfig(env);
/** Longer than every timer (retention, wait ceiling, lease, claim timeout): ageing fires them all. */
export const AGE_MS = 2 * Math.max(CONFIG.jobRetentionMs, CONFIG.waitCeilingMs, 3_600_000);

/**
 * Which callback token the runner presents: the latest reservation of the handle in this lifetime,
 * the first one (older than the latest once the handle was purged and reserved again), or the
 * latest one of a lifetime that ended (deleted, maybe re-created since).
 */
export type TokenChoice = "latest" | "first" | "ended";

export type Op =
  | { t: "create" }
  | { t: "delete" }
  | { t: "reserve"; h: string; other: boolean }
  | { t: "register" }
  | { t: "finish" }
  | { t: "suspend"; picks: number[]; wake: Wake; stray: boolean }
  | { t: "complete"; pick: number; variant: number; token: TokenChoice }
  | { t: "append"; text: string }
  | { t: "claim"; max: number; leaseMs: number }
  | { t: "ack"; n: number; again: boolean; unknown: boolean }
  | { t: "age" }
  | { t: "restart" };

const handle = fc.constantFrom(...HANDLES);

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant({ t: "create" as const }), weight: 2 },
  { arbitrary: fc.constant({ t: "delete" as const }), weight: 1 },
  {
    arbitrary: fc.record({
      t: fc.constant("reserve" as const),
      h: handle,
      other: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
    }),
    weight: 6,
  },
  { arbitrary: fc.constant({ t: "register" as const }), weight: 5 },
  { arbitrary: fc.constant({ t: "finish" as const }), weight: 2 },
  {
    // The waited handles are picked when the command runs, among the session's jobs (running ones
    // first), so that most suspends are valid; `stray` adds a handle that was never reserved.
    arbitrary: fc.record({
      t: fc.constant("suspend" as const),
      picks: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 }),
      wake: fc.constantFrom("all" as const, "any" as const),
      stray: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    }),
    weight: 5,
  },
  {
    // The handle is picked when the command runs, among those the runner holds a token of.
    arbitrary: fc.record({
      t: fc.constant("complete" as const),
      pick: fc.integer({ min: 0, max: 2 }),
      variant: fc.integer({ min: 0, max: 3 }),
      token: fc.constantFrom<TokenChoice>("latest", "latest", "latest", "latest", "first", "ended"),
    }),
    weight: 9,
  },
  {
    arbitrary: fc.string({ maxLength: 6 }).map((text) => ({ t: "append" as const, text })),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("claim" as const),
      max: fc.integer({ min: 1, max: 3 }),
      // Leases never lapse on the real clock within a run; ageing lapses them all.
      leaseMs: fc.integer({ min: 300_000, max: 3_600_000 }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("ack" as const),
      n: fc.integer({ min: 1, max: 3 }),
      again: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
      unknown: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    }),
    weight: 4,
  },
  { arbitrary: fc.constant({ t: "age" as const }), weight: 4 },
  { arbitrary: fc.constant({ t: "restart" as const }), weight: 1 },
);

/** Results a runner reports; 3 repeats 0 as `observed` (the same result, so a duplicate of it). */
export const VARIANTS = [0, 1, 2, 4].map(resultOf);

/** The handles a suspend waits for: its picks among the jobs, running ones first (by seq). */
export function waitedHandles(s: Session | null, op: Extract<Op, { t: "suspend" }>): string[] {
  const jobs = Object.values(s?.jobs ?? {}).sort(
    (a, b) => Number(a.result !== null) - Number(b.result !== null) || a.seq - b.seq,
  );
  const candidates = jobs.length > 0 ? jobs.map((job) => job.handle) : [...HANDLES];
  const picked = op.picks.map((pick) => candidates[pick % candidates.length]!);
  return [...new Set(picked), ...(op.stray ? ["never-reserved"] : [])];
}
