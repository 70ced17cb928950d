// The one physical alarm of a session object, pointed at the earliest logical timer.
// Which timers exist and when they fall due is the domain's (`nextDueAt`); running them is the object's.

export class PhysicalAlarm {
  private armedFor: number | null | undefined;

  constructor(private readonly storage: Pick<DurableObjectStorage, "setAlarm" | "deleteAlarm">) {}

  /** The platform cleared the alarm by firing it: the next `arm` must set it again. */
  fired(): void {
    this.armedFor = undefined;
  }

  /** Inside alarm() only a future time is set: one at or before now can be dropped (workerd #6866). */
  async arm(due: number | null, inAlarm: boolean): Promise<void> {
    const at = due === null ? null : inAlarm ? Math.max(due, Date.now() + 1) : due;
    if (at === this.armedFor) return;
    this.armedFor = at;
    if (at === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(at);
  }
}
