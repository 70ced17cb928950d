// The one physical alarm of a session object, pointed at the earliest logical timer.
// Which timers exist and when they fall due is the domain's (`nextDueAt`); running them is the object's.

const ARM_ATTEMPTS = 4;
const ARM_RETRY_BASE_MS = 50;

export class PhysicalAlarm {
  private armedFor: number | null | undefined;

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
   * Points the alarm at `due`. Inside alarm() only a future time is set: one at or before now can
   * be dropped (workerd #6866); `floorMs` pushes it further when a due timer cannot run yet.
   * A failed `setAlarm` is retried, then thrown: a lost alarm would strand the session.
   */
  async arm(due: number | null, inAlarm: boolean, floorMs = 1): Promise<void> {
    const at = due === null ? null : inAlarm ? Math.max(due, Date.now() + floorMs) : due;
    if (at === this.armedFor) return;
    for (let attempt = 1; ; attempt += 1) {
      try {
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
