// The audit trail in the session object's SQLite: a ring of AUDIT_MAX_EVENTS slots. Event `seq`
// goes to slot `seq % AUDIT_MAX_EVENTS`, overwriting the event AUDIT_MAX_EVENTS older in place:
// one row written per event, never a delete (a delete is billed as a written row too, so a log
// trimmed by deletes costs two writes per event). Reads show only the newest AUDIT_MAX_EVENTS
// within AUDIT_RETENTION_MS; older rows are invisible until overwritten.
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
    sql.exec(
      `INSERT INTO audit (slot, seq, at, type, detail) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (slot) DO UPDATE SET seq = excluded.seq, at = excluded.at, type = excluded.type,
         detail = excluded.detail`,
      seq % this.bounds.auditMaxEvents,
      seq,
      now,
      type,
      JSON.stringify(detail),
    );
    this.lastSeq = seq;
  }

  /** Events after `after`, oldest first, at most the newest AUDIT_MAX_EVENTS, none expired. */
  page(
    sql: SqlStorage,
    now: number,
    cmd: { after: number; limit: number },
  ): { events: StoredEvent[]; next_after: number | null } {
    // The ring holds at most AUDIT_MAX_EVENTS rows, so this scan is bounded whatever the history.
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
