// The session's storage: the only owner of its SQL, its transactions and the metering of both.
// What to write is the domain's (a decision's core, writes and events); when, the loop's.

import type { AuditEvent } from "../../domain/audit";
import type { Core, Needs, Overdue, Write } from "../../domain/decision";
import type { Session } from "../../domain/state";
import { AuditStore } from "../audit-store";
import { meteredSql, type SqlMeter } from "../metered-sql";
import { hasSchema, prepareSchema } from "../migrations";
import { countPending } from "./inbox";
import { sweepPending } from "./outputs";
import { oldestRetained, retainedAfter } from "./retention";
import { loadRows } from "./rows";
import { coreMoves, loadSession, writeCore } from "./session-row";
import { applyWrite } from "./writers";

export class Store {
  readonly meter: SqlMeter = { rowsRead: 0, rowsWritten: 0, statements: new Set() };
  readonly audit: AuditStore;
  /** `oldestRetained` over all rows: it moves only by the writes, so it is kept, not read. */
  private retainedSince: number | null = null;
  private readonly metered: { sql: SqlStorage; settle(): void };

  constructor(
    private readonly storage: DurableObjectStorage,
    bounds: ConstructorParameters<typeof AuditStore>[0],
  ) {
    this.audit = new AuditStore(bounds);
    this.metered = meteredSql(storage.sql, this.meter);
  }

  /** Runs a read against storage and tallies the rows it read: every read goes through here. */
  read<T>(query: (sql: SqlStorage) => T): T {
    try {
      return query(this.metered.sql);
    } finally {
      this.metered.settle();
    }
  }

  /** Runs `change` in one transaction and tallies its rows: every write goes through here. */
  transaction(change: (sql: SqlStorage) => void): void {
    try {
      this.storage.transactionSync(() => change(this.metered.sql));
    } finally {
      this.metered.settle();
    }
  }

  /** An id never created (or deleted) has no schema: a 404 leaves no storage behind. */
  hasSchema(): boolean {
    return this.read(hasSchema);
  }

  /** The schema a lifetime's rows go into; all-or-nothing, as a migration must never stop half-way. */
  prepareSchema(): void {
    this.transaction(prepareSchema);
  }

  /** The core as stored (object start), with the audit trail's held record and the retention time. */
  loadCore(): Core | null {
    return this.read((sql) => {
      const loaded = loadSession(sql);
      this.audit.adopt(loaded?.heldText ?? null);
      this.retainedSince = loaded === null ? null : oldestRetained(sql);
      return loaded?.core ?? null;
    });
  }

  get retained(): number | null {
    return this.retainedSince;
  }

  loadRows(core: Core, needs: Needs, now: number): { session: Session; overdue: Overdue | null } {
    return this.read((sql) => loadRows(sql, core, needs, now));
  }

  countPending(now: number): number {
    return this.read((sql) => countPending(sql, now));
  }

  /** Whether full outputs wait for their sweep from R2. */
  sweepPending(): boolean {
    return this.read(sweepPending);
  }

  /**
   * Persists the next core and the writes, with the audit events, in one transaction: the trail
   * never records a change that did not commit, or misses one. Returns whether a purge left full
   * outputs to sweep from R2.
   */
  persist(
    before: Core | null,
    after: Core | null,
    writes: readonly Write[],
    events: readonly AuditEvent[],
  ): boolean {
    try {
      this.transaction((sql) => {
        // ---- the audit trail: the events, and the record the session row may hold ----
        // A record may wait in the session row only when the commit writes that row anyway.
        const hold = after !== null && coreMoves(before, after);
        const heldBefore = this.audit.heldText;
        for (const event of events) this.audit.append(sql, Date.now(), event, hold);
        const held = { before: heldBefore, after: this.audit.heldText };
        // ---- the audit trail ends ----
        if (after !== null) writeCore(sql, before, after, held);
        for (const write of writes) applyWrite(sql, write);
      });
    } catch (error) {
      // Rolled back: the trail's counters and its held record may be ahead of what committed.
      this.reloadAudit(before);
      throw error;
    }
    const retained = retainedAfter(this.retainedSince, writes);
    if (retained !== "read again") {
      this.retainedSince = retained;
      return false;
    }
    // A purge may have left parts to sweep from R2.
    return this.read((sql) => {
      this.retainedSince = oldestRetained(sql);
      return sweepPending(sql);
    });
  }

  /** Records an event that comes with no change of state, in its own transaction. */
  record(core: Core | null, event: AuditEvent): void {
    try {
      this.transaction((sql) => {
        const heldBefore = this.audit.heldText;
        this.audit.append(sql, Date.now(), event);
        // A record that took the held one into its row clears it from the session row.
        const held = { before: heldBefore, after: this.audit.heldText };
        if (core !== null && held.before !== held.after) writeCore(sql, core, core, held);
      });
    } catch (error) {
      this.reloadAudit(core);
      throw error;
    }
  }

  /** The trail's counters and held record, read again from what storage committed. */
  private reloadAudit(core: Core | null): void {
    this.audit.reload(core === null ? null : (this.read(loadSession)?.heldText ?? null));
  }

  /** The lifetime ended: the trail and the retention time start afresh with the next one. */
  forget(): void {
    this.audit.forget();
    this.retainedSince = null;
  }

  /** Every row goes (the alarm is the scheduler's): the object keeps nothing. */
  deleteAll(): Promise<void> {
    return this.storage.deleteAll();
  }

  get databaseSize(): number {
    return this.storage.sql.databaseSize;
  }
}
