// The audit trail in the session object's SQLite: two rings of AUDIT_MAX_EVENTS slots each. The
// records ring (`audit_kept`) holds accepted completions, delivery attempts, operator actions,
// ceilings and cancels; the noise ring (`audit`) holds everything else (runs, claims, acks, refused
// and duplicate completions), so no flood of noise can push a record out (docs/decisions.md 700,
// 710). Each event
// is one row written, overwriting the event AUDIT_MAX_EVENTS older in its own ring in place, never
// a delete (a delete is billed as a written row too). Reads show only events within
// AUDIT_RETENTION_MS; older rows are invisible until overwritten. The last seqs are read once per
// object start (a scan of each ring; no index, which would cost a second written row per event).
import type { AuditEvent, StoredEvent } from "../domain/audit";

interface Bounds {
  readonly auditMaxEvents: number;
  readonly auditRetentionMs: number;
}

/**
 * What an operator must be able to find a week later, whatever else happened meanwhile: accepted
 * completions, delivery attempts, operator actions, ceilings and the agent's cancels. None can be
 * flooded: each is bounded by what the session really did (a job's one completion, one attempt
 * per resume try, one operator action per request an operator made, one ceiling per wait's end,
 * one cancel per running job), where a stale runner's refused completions are unlimited
 * (docs/decisions.md 700, 710).
 */
export const isRecord = (event: AuditEvent): boolean =>
  (event.type === "completion" && event.outcome === "accepted") ||
  event.type === "delivery" ||
  event.type === "operator" ||
  event.type === "ceiling" ||
  event.type === "cancel";

type EventRow = { seq: number; at: number; type: string; detail: string };

/** The slot ranges that hold ring positions from..to (inclusive), in ring order. */
function slotRanges(from: number, to: number, size: number): Array<[number, number]> {
  const [start, end] = [from % size, to % size];
  return start <= end
    ? [[start, end]]
    : [
        [start, size - 1],
        [0, end],
      ];
}

const decode = (row: EventRow): StoredEvent =>
  ({
    seq: row.seq,
    at: new Date(row.at).toISOString(),
    type: row.type,
    ...JSON.parse(row.detail),
  }) as StoredEvent;

export class AuditStore {
  /** The last seq written (either ring) and the records ring's last position; read on first use. */
  private lastSeq: number | null = null;
  private lastRecord = 0;

  constructor(private readonly bounds: Bounds) {}

  private last(sql: SqlStorage): number {
    if (this.lastSeq === null) {
      const noise = sql
        .exec<{ seq: number }>("SELECT COALESCE(MAX(seq), 0) AS seq FROM audit")
        .one().seq;
      const kept = sql
        .exec<{ ring: number; seq: number }>(
          "SELECT COALESCE(MAX(ring_seq), 0) AS ring, COALESCE(MAX(seq), 0) AS seq FROM audit_kept",
        )
        .one();
      this.lastRecord = kept.ring;
      this.lastSeq = Math.max(noise, kept.seq);
    }
    return this.lastSeq;
  }

  /** Appends inside the caller's transaction: the event commits with the change it records. */
  append(sql: SqlStorage, now: number, event: AuditEvent): void {
    const seq = this.last(sql) + 1;
    const { type, ...detail } = event;
    // REPLACE over a slot of a table without a secondary index overwrites the row in place (one
    // row written), and compiles one half where the upsert compiled two, both kept prepared.
    if (isRecord(event)) {
      const ring = this.lastRecord + 1;
      sql.exec(
        "REPLACE INTO audit_kept (slot, ring_seq, seq, at, type, detail) VALUES (?, ?, ?, ?, ?, ?)",
        ring % this.bounds.auditMaxEvents,
        ring,
        seq,
        now,
        type,
        JSON.stringify(detail),
      );
      this.lastRecord = ring;
    } else {
      sql.exec(
        "REPLACE INTO audit (slot, seq, at, type, detail) VALUES (?, ?, ?, ?, ?)",
        seq % this.bounds.auditMaxEvents,
        seq,
        now,
        type,
        JSON.stringify(detail),
      );
    }
    this.lastSeq = seq;
  }

  /**
   * Events after `after`, oldest first. The noise ring holds the noise among the newest
   * AUDIT_MAX_EVENTS seqs, found by slot as seq % size; the records ring is searched by position
   * (its seqs grow with it), so a page reads about `limit` rows of each ring plus a dozen point
   * reads, whatever the rings' size. Expired events are a prefix of each ring; a page that covers
   * some shows fewer, and `next_after` moves past them.
   */
  page(
    sql: SqlStorage,
    now: number,
    cmd: { after: number; limit: number },
  ): { events: StoredEvent[]; next_after: number | null } {
    const max = this.bounds.auditMaxEvents;
    const cutoff = now - this.bounds.auditRetentionMs;
    const last = this.last(sql);
    const from = Math.max(cmd.after, last - max) + 1;
    const to = Math.min(last, from + cmd.limit - 1);
    if (from > to) return { events: [], next_after: null };
    const noise = slotRanges(from, to, max).flatMap(([low, high]) =>
      sql
        .exec<EventRow>(
          `SELECT seq, at, type, detail FROM audit
           WHERE slot BETWEEN ? AND ? AND seq BETWEEN ? AND ? AND at > ? ORDER BY slot`,
          low,
          high,
          from,
          to,
          cutoff,
        )
        .toArray(),
    );
    // Records at or below `to` only: the noise past it was not read, and the next page takes both.
    const records = this.recordsAfter(sql, cmd.after, cutoff, cmd.limit + 1).filter(
      (row) => row.seq <= to,
    );
    const merged = [...records, ...noise].sort((a, b) => a.seq - b.seq);
    if (merged.length > cmd.limit) {
      const events = merged.slice(0, cmd.limit);
      return { events: events.map(decode), next_after: events.at(-1)?.seq ?? null };
    }
    return { events: merged.map(decode), next_after: to < last ? to : null };
  }

  /** Up to `count` records with seq > after and time > cutoff, oldest first (a binary search). */
  private recordsAfter(sql: SqlStorage, after: number, cutoff: number, count: number): EventRow[] {
    this.last(sql);
    const size = this.bounds.auditMaxEvents;
    const newest = this.lastRecord;
    if (newest === 0) return [];
    const wanted = (ring: number): boolean => {
      const row = sql
        .exec<{ seq: number; at: number }>(
          "SELECT seq, at FROM audit_kept WHERE slot = ?",
          ring % size,
        )
        .toArray()[0];
      return row !== undefined && row.seq > after && row.at > cutoff;
    };
    let low = Math.max(1, newest - size + 1);
    let high = newest;
    if (!wanted(high)) return [];
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      if (wanted(middle)) high = middle;
      else low = middle + 1;
    }
    const end = Math.min(newest, low + count - 1);
    return slotRanges(low, end, size).flatMap(([first, final]) =>
      sql
        .exec<EventRow>(
          "SELECT seq, at, type, detail FROM audit_kept WHERE slot BETWEEN ? AND ? ORDER BY slot",
          first,
          final,
        )
        .toArray(),
    );
  }

  /** Storage was wiped (the session was deleted): the next lifetime starts at seq 1. */
  forget(): void {
    this.lastSeq = null;
    this.lastRecord = 0;
  }
}
