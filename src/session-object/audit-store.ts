// The audit trail in the session object's SQLite: a ring of AUDIT_MAX_EVENTS slots. Event `seq`
// goes to slot `seq % AUDIT_MAX_EVENTS`, overwriting the event AUDIT_MAX_EVENTS older in place:
// one row written per event, never a delete (a delete is billed as a written row too, so a log
// trimmed by deletes costs two writes per event). Reads show only the newest AUDIT_MAX_EVENTS
// within AUDIT_RETENTION_MS; older rows are invisible until overwritten. The last seq is read
// once per object start (a scan of at most AUDIT_MAX_EVENTS rows; no index, which would cost a
// second written row per event).
import type { AuditEvent, StoredEvent } from "../domain/audit";

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
    // REPLACE over a slot of a table without a secondary index overwrites the row in place (one
    // row written), and compiles one half where the upsert compiled two, both kept prepared.
    sql.exec(
      "REPLACE INTO audit (slot, seq, at, type, detail) VALUES (?, ?, ?, ?, ?)",
      seq % this.bounds.auditMaxEvents,
      seq,
      now,
      type,
      JSON.stringify(detail),
    );
    this.lastSeq = seq;
  }

  /**
   * Events after `after`, oldest first: the next `limit` seqs, found by their slots (one or two
   * primary-key ranges), so a page reads `limit` rows whatever the ring's size. Expired events are
   * a prefix of the trail; a page that covers some shows fewer, and `next_after` moves past them.
   */
  page(
    sql: SqlStorage,
    now: number,
    cmd: { after: number; limit: number },
  ): { events: StoredEvent[]; next_after: number | null } {
    const max = this.bounds.auditMaxEvents;
    const last = this.last(sql);
    const from = Math.max(cmd.after, last - max) + 1;
    const to = Math.min(last, from + cmd.limit - 1);
    if (from > to) return { events: [], next_after: null };
    // The seqs from..to sit in slots from%max..to%max, wrapping past the ring's end at most once.
    const [start, end] = [from % max, to % max];
    const ranges: Array<[number, number]> =
      start <= end
        ? [[start, end]]
        : [
            [start, max - 1],
            [0, end],
          ];
    const rows = ranges.flatMap(([low, high]) =>
      sql
        .exec<{ seq: number; at: number; type: string; detail: string }>(
          `SELECT seq, at, type, detail FROM audit
           WHERE slot BETWEEN ? AND ? AND seq BETWEEN ? AND ? AND at > ? ORDER BY slot`,
          low,
          high,
          from,
          to,
          now - this.bounds.auditRetentionMs,
        )
        .toArray(),
    );
    const events = rows.map(
      (row) =>
        ({
          seq: row.seq,
          at: new Date(row.at).toISOString(),
          type: row.type,
          ...JSON.parse(row.detail),
        }) as StoredEvent,
    );
    return { events, next_after: to < last ? to : null };
  }

  /** Storage was wiped (the session was deleted): the next lifetime starts at seq 1. */
  forget(): void {
    this.lastSeq = null;
  }
}
