// The one physical alarm of a session object: setting it safely (one call at a time, retried).
// Which time it is set to, and what runs when it fires, is the scheduler's (scheduler.ts).

const ARM_ATTEMPTS = 4;
const ARM_RETRY_BASE_MS = 50;

export class PhysicalAlarm {
  private armedFor: number | null | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: Pick<DurableObjectStorage, "setAlarm" | "deleteAlarm">,
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** The platform cleared the alarm by firing it (or storage was wiped): the next `arm` sets it. */
  forget(): void {
    this.armedFor = undefined;
  }

  /**
   * Points the alarm at what `due()` says when this call's turn comes. Calls run one at a time and
   * every try asks `due()` again, so a retried older call can never overwrite a newer due time.
   * Inside alarm() only a future time is set: one at or before now can be dropped (workerd #6866);
   * `floorMs` pushes it further when a due timer cannot run yet. A failed `setAlarm` is retried,
   * then thrown: a lost alarm would strand the session.
   */
  arm(due: () => number | null, inAlarm: boolean, floorMs = 1): Promise<void> {
    const turn = this.queue.then(() => this.armNow(due, inAlarm, floorMs));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async armNow(due: () => number | null, inAlarm: boolean, floorMs: number) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const next = due();
        const at = next === null ? null : inAlarm ? Math.max(next, Date.now() + floorMs) : next;
        if (at === this.armedFor) return;
        if (at === null) await this.storage.deleteAlarm();
        else await this.storage.setAlarm(at);
        this.armedFor = at;
        return;
      } catch (error) {
        this.armedFor = undefined;
        if (attempt >= ARM_ATTEMPTS) throw error;
        await this.sleep(ARM_RETRY_BASE_MS * 2 ** (attempt - 1));
      }
    }
  }
}
