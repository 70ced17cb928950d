// Long-poll waiters of a session object: woken when notify_seq moves or the session goes away.
// What they answer once woken is left to the caller.

export class Waiters {
  private readonly pending = new Set<() => void>();

  /** Resolves when `wakeAll` is called or after `ms`, whichever comes first. */
  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.pending.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.pending.add(done);
    });
  }

  /** Long-polls open now: the per-session quota counts them. */
  get open(): number {
    return this.pending.size;
  }

  wakeAll(): void {
    for (const wake of [...this.pending]) wake();
  }
}
