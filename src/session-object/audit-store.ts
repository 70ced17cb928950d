// The audit trail in the session object's SQLite: one row per event, keyed by a growing seq.
// Bounded to the newest AUDIT_MAX_EVENTS within AUDIT_RETENTION_MS: reads never show more, and
// rows beyond the bound are deleted every PRUNE_EVERY appends (one statement, by primary key).
import type { AuditEvent, StoredEvent } from "../domain/audit";

const PRUNE_EVERY = 32;

interface Bounds {
  readonly auditMaxEvents: number;
  readonly auditRetentionMs: number;
}

export class AuditStore {
  /** The last seq written; read from storage on first use. */
  private lastSeq: number | null = null;

  constructor(private readonly bounds: Bounds) {}

  private last(sql: SqlStorage): number {
    this.lastSeq ??= sql
      .exec<{ seq: number }>("SELECT COALESCE(MAX(seq), 0) AS seq FROM audit")
      .one().seq;
    return this.lastSeq;
  }

  /** Appends inside the caller's transaction: the event commits with the change it records. */
  append(sql: SqlStorage, now: number, event: AuditEvent): void {
    const seq = this.last(sql) + 1;
    const { type, ...detail } = event;
    sql.exec(
      "INSERT INTO audit (seq, at, type, detail) VALUES (?, ?, ?, ?)",
      seq,
      now,
      type,
      JSON.stringify(detail),
    );
    this.lastSeq = seq;
    if (seq % PRUNE_EVERY === 0) this.prune(sql, now);
  }

  private prune(sql: SqlStorage, now: number): void {
    const seq = this.last(sql);
    sql.exec("DELETE FROM audit WHERE seq <= ?", seq - this.bounds.auditMaxEvents);
    // Time grows with seq, so the expired rows are a prefix: found by walking it, no index needed.
    sql.exec(
      `DELETE FROM audit WHERE seq < COALESCE(
         (SELECT seq FROM audit WHERE at > ? ORDER BY seq LIMIT 1), ?)`,
      now - this.bounds.auditRetentionMs,
      seq + 1,
    );
  }

  /** Events after `after`, oldest first, within the bounds even before a prune ran. */
  page(
    sql: SqlStorage,
    now: number,
    cmd: { after: number; limit: number },
  ): { events: StoredEvent[]; next_after: number | null } {
    const floor = Math.max(cmd.after, this.last(sql) - this.bounds.auditMaxEvents);
    const rows = sql
      .exec<{ seq: number; at: number; type: string; detail: string }>(
        "SELECT seq, at, type, detail FROM audit WHERE seq > ? AND at > ? ORDER BY seq LIMIT ?",
        floor,
        now - this.bounds.auditRetentionMs,
        cmd.limit + 1,
      )
      .toArray();
    const events = rows.slice(0, cmd.limit).map(
      (row) =>
        ({
          seq: row.seq,
          at: new Date(row.at).toISOString(),
          type: row.type,
          ...JSON.parse(row.detail),
        }) as StoredEvent,
    );
    const more = rows.length > cmd.limit;
    return { events, next_after: more ? (events.at(-1)?.seq ?? null) : null };
  }

  /** Storage was wiped (the session was deleted): the next lifetime starts at seq 1. */
  forget(): void {
    this.lastSeq = null;
  }
}
