// The session's storage: the only owner of its SQL, its transactions and the metering of both.
// What to write is the domain's (a decision's core, writes and events); when, the loop's.

import type { AuditEvent } from "../../domain/audit";
import type { Core, Needs, Overdue, Write } from "../../domain/decision";
import type { Session } from "../../domain/state";
import { meteredSql, type SqlMeter } from "../metered-sql";
import { hasSchema, isCurrent, migrate, tablesAtStart } from "../migrations";
import { AuditTrail } from "./audit";
import { countPending } from "./inbox";
import { prefixesLeft, sweepPending } from "./outputs";
import { oldestRetained, retainedAfter } from "./retention";
import { loadRows } from "./rows";
import { loadCore, writeCore } from "./session-row";
import { applyWrite } from "./writers";

export class Store {
  readonly meter: SqlMeter = { rowsRead: 0, rowsWritten: 0, statements: new Set() };
  readonly audit: AuditTrail;
  /** `oldestRetained` over all rows: it moves only by the writes, so it is kept, not read. */
  private retainedSince: number | null = null;
  private readonly metered: { sql: SqlStorage; settle(): void };

  constructor(
    private readonly storage: DurableObjectStorage,
    bounds: ConstructorParameters<typeof AuditTrail>[0],
  ) {
    this.audit = new AuditTrail(bounds);
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
  migrate(): void {
    let created = false;
    this.transaction((sql) => {
      created = migrate(sql);
    });
    // A schema made just now holds no event: the trail's tally is known without reading it.
    if (created) this.audit.startEmpty();
  }

  /**
   * At object start: whether a session's schema exists, brought up to date when it does (a
   * transaction only when a migration is due), and whether full outputs wait for their sweep.
   */
  started(): { schema: boolean; sweepPending: boolean } {
    const found = this.read((sql) => {
      const { schema, sweepTable } = tablesAtStart(sql);
      return { schema, sweepTable, current: schema && isCurrent(sql) };
    });
    if (found.schema && !found.current) this.migrate();
    return {
      schema: found.schema,
      // The table exists once migrated (migration 8): a migration that made it left it empty.
      sweepPending: found.sweepTable && this.read(prefixesLeft),
    };
  }

  /** The core as stored (object start), and the retention time. */
  loadCore(): Core | null {
    return this.read((sql) => {
      const core = loadCore(sql);
      this.retainedSince = core === null ? null : oldestRetained(sql);
      return core;
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

  /**
   * Persists the next core and the writes, with the audit events, in one transaction: the trail
   * never records a change that did not commit, or misses one.
   */
  persist(
    before: Core | null,
    after: Core | null,
    writes: readonly Write[],
    events: readonly AuditEvent[],
  ): void {
    try {
      this.transaction((sql) => {
        for (const event of events) this.audit.append(sql, Date.now(), event);
        if (after !== null) writeCore(sql, before, after);
        for (const write of writes) applyWrite(sql, write);
      });
    } catch (error) {
      // Rolled back: the trail's tally may be ahead of what committed.
      this.audit.reload();
      throw error;
    }
  }

  /**
   * After a commit of `writes`: the retention time moved by them, and whether a purge left full
   * outputs to sweep from R2. Kept apart from `persist`, so a read that fails here can never keep
   * the loop from swapping in the core that committed.
   */
  committed(writes: readonly Write[]): boolean {
    const retained = retainedAfter(this.retainedSince, writes);
    if (retained !== "read again") {
      this.retainedSince = retained;
      return false;
    }
    return this.read((sql) => {
      this.retainedSince = oldestRetained(sql);
      return sweepPending(sql);
    });
  }

  /** Records an event that comes with no change of state, in its own transaction. */
  record(event: AuditEvent): void {
    try {
      this.transaction((sql) => this.audit.append(sql, Date.now(), event));
    } catch (error) {
      this.audit.reload();
      throw error;
    }
  }

  /** When the audit trail next needs a trim (its cap or retention); null: it does not. */
  auditTrimDueAt(now: number): number | null {
    return this.read((sql) => this.audit.trimDueAt(sql, now));
  }

  /** One bounded batch of the audit trail's deletes, when one is due: an ordinary write. */
  trimAudit(now: number): void {
    const trim = this.read((sql) => this.audit.trimWrite(sql, now));
    if (trim === null) return;
    this.transaction((sql) => applyWrite(sql, trim));
    this.audit.reload();
  }

  /** The lifetime ended: the trail and the retention time start afresh with the next one. */
  forget(): void {
    this.audit.reload();
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
