// The one physical alarm of a session object, shared by the work that needs it. Each contributor
// says when its work is next due and does that work when the alarm fires; the scheduler alone
// sets the alarm, to the earliest of those times. What each contributor does is its own.

import { PhysicalAlarm } from "./alarm";

export interface AlarmContributor {
  /** When its work is next due; null: none. Called at every arming, so it reads little: a throw is asked again soon. */
  nextAt(): number | null;
  /** Does the work that is due (an alarm can fire twice: work found not due is skipped). */
  onAlarm(): Promise<void>;
  /** Steers no delivery, so it runs while settings HTTP refuses to serve pause the rest. */
  readonly runsWhilePaused?: boolean;
}

/** The latest time a `Date` (and so an alarm) can hold. */
const LATEST_TIME_MS = 8.64e15;
/** After a contributor failed (its next time, or its work): when to try it again. */
const ASK_AGAIN_MS = 1_000;

/**
 * A contributor's next time, kept to what an alarm can be set to. One that cannot say (its read
 * failed) is asked again soon: its failure must not keep the others' times from the alarm.
 */
function nextAtOf(contributor: AlarmContributor): number | null {
  try {
    const at = contributor.nextAt();
    return at === null || at > LATEST_TIME_MS ? null : at;
  } catch (error) {
    console.error("an alarm contributor could not say its next time; asking again soon", error);
    return Date.now() + ASK_AGAIN_MS;
  }
}

/** How often an object whose settings are refused checks again whether they were fixed. */
const PAUSED_RETRY_MS = 15_000;
/** After arming failed all its retries: the next try. */
const ARM_AGAIN_MS = 5_000;

export class Scheduler {
  /** Alarm invocations since this object started (for its stats). */
  alarms = 0;
  private readonly alarm: PhysicalAlarm;
  private readonly earliest = (): number | null => {
    let earliest: number | null = null;
    for (const contributor of this.contributors) {
      const at = nextAtOf(contributor);
      if (at !== null && (earliest === null || at < earliest)) earliest = at;
    }
    return earliest;
  };

  /** `contributors` run in this order when the alarm fires. */
  constructor(
    private readonly state: {
      readonly storage: Pick<DurableObjectStorage, "setAlarm" | "deleteAlarm">;
      waitUntil(promise: Promise<unknown>): void;
    },
    private readonly contributors: readonly AlarmContributor[],
  ) {
    this.alarm = new PhysicalAlarm(state.storage);
  }

  /** Points the alarm at the earliest due time (`PhysicalAlarm.arm` says how). */
  arm(inAlarm = false, floorMs = 1): Promise<void> {
    return this.alarm.arm(this.earliest, inAlarm, floorMs);
  }

  /** Arms without holding up the caller; a failure keeps trying while this object lives. */
  armInBackground(): void {
    this.state.waitUntil(
      this.arm().catch((error: unknown) => {
        // Retried already: keep trying, since a session nobody touches again (suspended on a
        // dead runner) would otherwise lose its ceiling.
        console.error("setAlarm failed after retries; trying again in 5 s", error);
        setTimeout(() => this.armInBackground(), ARM_AGAIN_MS);
      }),
    );
  }

  /**
   * The alarm fired (the platform cleared it): each contributor's due work, in order, then the
   * alarm again. While settings are refused (`paused`), only the work that steers no delivery
   * runs, and the alarm looks again later: nothing else would wake the object once they are fixed.
   */
  async fired(paused: boolean): Promise<void> {
    this.alarms += 1;
    this.alarm.forget();
    let failed = false;
    for (const contributor of this.contributors) {
      if (paused && contributor.runsWhilePaused !== true) continue;
      // One contributor's failure (a storage fault) must not skip the others' work, nor the
      // alarm's next setting: its work stays due, and runs again a second later.
      try {
        await contributor.onAlarm();
      } catch (error) {
        console.error("an alarm contributor failed; the others run", error);
        failed = true;
      }
    }
    await this.arm(true, paused ? PAUSED_RETRY_MS : failed ? ASK_AGAIN_MS : 1);
  }

  /** The lifetime ended: no alarm until the next `arm`. */
  deleteAlarm(): Promise<void> {
    return this.state.storage.deleteAlarm();
  }

  /** The storage was deleted: the platform holds no alarm now, whatever was set. */
  forget(): void {
    this.alarm.forget();
  }
}
