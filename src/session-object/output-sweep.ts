// The R2 prefixes of full outputs that outlived their rows (a purged job, a deleted session),
// deleted from the alarm in bounded batches: a contributor of the scheduler. Deciding what goes is
// the purge's and the delete's; the prefixes wait in storage (store/outputs.ts).

import type { AlarmContributor } from "./scheduler";
import { forgetPrefix, nextPrefix, prefixesLeft } from "./store/outputs";
import type { Store } from "./store/store";

/** One R2 list answers at most 1,000 keys, and one delete takes at most 1,000. */
const KEYS_PER_BATCH = 1000;
/** Per alarm invocation: 4,000 objects, 8 R2 operations; the rest waits for the next one. */
export const BATCHES_PER_ALARM = 4;
/** Between two sweeping alarms: time for requests between them. */
export const SWEEP_PAUSE_MS = 100;
/** After a failed sweep (R2 unreachable): the next try. */
const SWEEP_RETRY_MS = 30_000;

type Bucket = Pick<R2Bucket, "list" | "delete">;

export class OutputSweep implements AlarmContributor {
  /** Deleting what outlived its rows is safe under any settings. */
  readonly runsWhilePaused = true;
  /** When the alarm next sweeps; null: nothing waits. */
  private dueAt: number | null = null;

  constructor(
    private readonly store: Store,
    /** Where full outputs live (wrangler.toml `OUTPUTS`); absent, no part was ever uploaded. */
    private readonly bucket: Bucket | undefined,
  ) {}

  /** A purge queued prefixes: the alarm sweeps them now, unless a sweep is set already. */
  queued(now: number): void {
    if (this.dueAt === null) this.dueAt = now;
  }

  /** Prefixes wait (found at load, or a delete queued its lifetime's): the alarm sweeps now. */
  sweepNow(now: number): void {
    this.dueAt = now;
  }

  nextAt(): number | null {
    return this.dueAt;
  }

  /**
   * One sweeping turn: bounded batches of R2 deletes. Once nothing is left of a deleted session
   * (no schema), its storage goes too, so the object keeps nothing.
   */
  async onAlarm(): Promise<void> {
    if (this.dueAt === null || this.dueAt > Date.now()) return;
    // Without the binding nothing was ever uploaded here; nothing to sweep, no alarm to spin.
    if (this.bucket === undefined) {
      this.dueAt = null;
      return;
    }
    let more: boolean;
    try {
      more = await this.sweep(this.bucket);
    } catch (error) {
      // R2 failing must not hold back the session's own timers (deliveries, ceilings): later.
      console.error(`output sweep failed: ${error instanceof Error ? error.name : "error"}`);
      this.dueAt = Date.now() + SWEEP_RETRY_MS;
      return;
    }
    this.dueAt = more ? Date.now() + SWEEP_PAUSE_MS : null;
    if (!more && !this.store.hasSchema()) await this.store.deleteAll();
  }

  /**
   * Deletes up to `BATCHES_PER_ALARM` batches of objects and forgets each prefix found empty.
   * Returns whether any prefix remains. An upload that lands after its prefix was listed is
   * deleted by its own request, which finds its job gone (http/outputs.ts).
   */
  private async sweep(bucket: Bucket): Promise<boolean> {
    for (let batch = 0; batch < BATCHES_PER_ALARM; batch += 1) {
      const prefix = this.store.read(nextPrefix);
      if (prefix === undefined) return false;
      const listed = await bucket.list({ prefix, limit: KEYS_PER_BATCH });
      if (listed.objects.length > 0)
        await bucket.delete(listed.objects.map((object) => object.key));
      if (!listed.truncated) this.store.transaction((sql) => forgetPrefix(sql, prefix));
    }
    return this.store.read(prefixesLeft);
  }
}
