// The lifetime of the session this object holds: the load when the object starts, the wipe that
// ends it, and the turn creates and deletes take one at a time. Between them, the loop runs.

import { lifetimePrefix } from "../domain/full-output";
import type { SessionLoop } from "./loop";
import { serviceUpSince } from "./service-clock";
import { keepPrefixes, prefixesToKeep } from "./store/outputs";

export class Lifetime {
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly state: Pick<DurableObjectState, "blockConcurrencyWhile">,
    readonly loop: SessionLoop,
    /** The sessions quota's count (tenant-places.ts); absent, nothing is counted. */
    readonly tenantSessions: D1Database | undefined,
  ) {}

  /** Loads the core at object start; run inside `blockConcurrencyWhile`. */
  async start(): Promise<void> {
    serviceUpSince();
    const { store, sweep, scheduler, indexer } = this.loop;
    // An id never created (or deleted) gets no schema: a 404 leaves no storage behind. A deleted
    // session may still have full outputs to sweep: the alarm goes on with them.
    const found = store.started();
    if (!found.schema) {
      if (found.sweepPending) {
        sweep.sweepNow(Date.now());
        await scheduler.arm();
      }
      return;
    }
    const core = store.loadCore();
    this.loop.adopt(core);
    if (core === null) {
      // A schema without a session: deleted under revision 1, which kept the tables.
      await store.deleteAll();
      return;
    }
    if (found.sweepPending) sweep.sweepNow(Date.now());
    // What the index got before a restart is unknown: an update may have been lost with it.
    this.loop.keepAlive(indexer.resend(this.loop.indexKeys()));
    await scheduler.arm();
  }

  /**
   * Runs creates and deletes one at a time. Each changes the count in D1 and this object's storage
   * with an await between them, and the input gate does not hold across a D1 call: without a turn,
   * a delete answered 404 in that gap would give back the place of the create it raced.
   */
  oneLifecycleChange<T>(change: () => Promise<T>): Promise<T> {
    const turn = this.turn.then(change);
    this.turn = turn.catch(() => undefined);
    return turn;
  }

  /** Ends the lifetime: every row, the schema and the alarm go; the next create starts afresh. */
  async wipe(): Promise<void> {
    const { store, sweep, scheduler, indexer, waiters } = this.loop;
    const core = this.loop.core;
    // The lifetime is fenced at once (no core); its full outputs go from the alarm, in batches.
    const sweeps =
      core === null
        ? []
        : store.read((sql) =>
            prefixesToKeep(
              sql,
              lifetimePrefix({ tenant: core.tenant, sessionId: core.id, lifetime: core.lifetime }),
            ),
          );
    if (core !== null) this.loop.keepAlive(indexer.removed(core.tenant, core.id));
    store.forget();
    this.loop.adopt(null);
    waiters.wakeAll();
    await this.state.blockConcurrencyWhile(async () => {
      await scheduler.deleteAlarm();
      await store.deleteAll();
      scheduler.forget();
      if (sweeps.length > 0) {
        store.transaction((sql) => keepPrefixes(sql, sweeps));
        sweep.sweepNow(Date.now());
        await scheduler.arm();
      }
    });
  }
}
