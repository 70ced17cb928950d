// The audit trail in the session object's SQLite: two rings of AUDIT_MAX_EVENTS slots each. The
// records ring (`audit_kept`) holds accepted completions, delivery attempts, operator actions,
// ceilings and cancels; the noise ring (`audit`) holds everything else (runs, claims, acks, refused
// and duplicate completions), so no flood of noise can push a record out (docs/decisions.md 700,
// 710). Each ring numbers its events (`ring_seq`, from 0) and keeps position p in slot
// p % AUDIT_MAX_EVENTS (712); both share one `seq`. Each event is one row written, overwriting the
// event AUDIT_MAX_EVENTS older in its own ring in place, never a delete (a delete is billed as a
// written row too). Reads show only events within AUDIT_RETENTION_MS; older rows are invisible
// until overwritten. The last seq and positions are read once per object start, and again after a
// transaction that threw (a scan of each ring; no index, which would cost a second written row per
// event).
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

/** The two rings: each numbers its own events (`ring_seq`, from 0) and slots them modulo its size. */
type Ring = "audit" | "audit_kept";

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

type Last = { seq: number; ring: number };

export class AuditStore {
  /**
   * The last seq written (either ring) and each ring's last position (-1: empty); read on first
   * use, and again after a transaction that may have rolled back (`reload`).
   */
  private counters: { seq: number; noise: number; kept: number } | null = null;

  constructor(private readonly bounds: Bounds) {}

  private last(sql: SqlStorage): { seq: number; noise: number; kept: number } {
    if (this.counters === null) {
      const read = (ring: Ring): Last =>
        sql
          .exec<Last>(
            `SELECT COALESCE(MAX(seq), 0) AS seq, COALESCE(MAX(ring_seq), -1) AS ring FROM ${ring}`,
          )
          .one();
      const [noise, kept] = [read("audit"), read("audit_kept")];
      this.counters = { seq: Math.max(noise.seq, kept.seq), noise: noise.ring, kept: kept.ring };
    }
    return this.counters;
  }

  /** Appends inside the caller's transaction: the event commits with the change it records. */
  append(sql: SqlStorage, now: number, event: AuditEvent): void {
    const counters = this.last(sql);
    const seq = counters.seq + 1;
    const { type, ...detail } = event;
    const kept = isRecord(event);
    const ring = (kept ? counters.kept : counters.noise) + 1;
    // REPLACE over a slot of a table without a secondary index overwrites the row in place (one
    // row written), and compiles one half where the upsert compiled two, both kept prepared.
    sql.exec(
      kept
        ? "REPLACE INTO audit_kept (slot, ring_seq, seq, at, type, detail) VALUES (?, ?, ?, ?, ?, ?)"
        : "REPLACE INTO audit (slot, ring_seq, seq, at, type, detail) VALUES (?, ?, ?, ?, ?, ?)",
      ring % this.bounds.auditMaxEvents,
      ring,
      seq,
      now,
      type,
      JSON.stringify(detail),
    );
    this.counters = kept ? { ...counters, seq, kept: ring } : { ...counters, seq, noise: ring };
  }

  /**
   * Events after `after`, oldest first. Each ring is searched by its own position (its seqs grow
   * with it), so a page reads about `limit` rows of each ring plus two dozen point reads, whatever
   * the rings' size, and a busy ring never hides the other's events (docs/decisions.md 712).
   * Expired events are a prefix of each ring and are skipped.
   */
  page(
    sql: SqlStorage,
    now: number,
    cmd: { after: number; limit: number },
  ): { events: StoredEvent[]; next_after: number | null } {
    const cutoff = now - this.bounds.auditRetentionMs;
    const counters = this.last(sql);
    // At most (last seq − after) events of either ring are past `after`: the search starts there.
    const newer = counters.seq - cmd.after;
    const kept = this.after(sql, "audit_kept", counters.kept, cmd, cutoff, newer);
    const noise = this.after(sql, "audit", counters.noise, cmd, cutoff, newer);
    const merged = [...kept.rows, ...noise.rows].sort((a, b) => a.seq - b.seq);
    const events = merged.slice(0, cmd.limit);
    // More remain if the merge passed `limit`, or a ring's read stopped short of its newest.
    const more = merged.length > cmd.limit || kept.more || noise.more;
    return { events: events.map(decode), next_after: more ? (events.at(-1)?.seq ?? null) : null };
  }

  /**
   * Up to `limit` events of a ring with seq > after and time > cutoff, oldest first, and whether
   * the ring holds more past them: a binary search for the first such position (among the newest
   * `newer` positions at most), then one range read. A slot whose row is not the position asked
   * for (empty, or a lap older) counts as before the page, and the read is filtered again.
   */
  private after(
    sql: SqlStorage,
    ring: Ring,
    newest: number,
    cmd: { after: number; limit: number },
    cutoff: number,
    newer: number,
  ): { rows: EventRow[]; more: boolean } {
    const size = this.bounds.auditMaxEvents;
    const none = { rows: [], more: false };
    if (newest < 0 || newer <= 0) return none;
    const wanted = (position: number): boolean => {
      const row = sql
        .exec<{ ring_seq: number; seq: number; at: number }>(
          ring === "audit"
            ? "SELECT ring_seq, seq, at FROM audit WHERE slot = ?"
            : "SELECT ring_seq, seq, at FROM audit_kept WHERE slot = ?",
          position % size,
        )
        .toArray()[0];
      return (
        row !== undefined && row.ring_seq === position && row.seq > cmd.after && row.at > cutoff
      );
    };
    let low = Math.max(0, newest - size + 1, newest - newer + 1);
    let high = newest;
    if (!wanted(high)) return none;
    // Where the ring's seqs run without gaps (a burst of one kind), the lowest possible position is
    // the answer: one read instead of the search's log₂.
    if (low < high && wanted(low)) high = low;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      if (wanted(middle)) high = middle;
      else low = middle + 1;
    }
    const end = Math.min(newest, low + cmd.limit - 1);
    const rows = slotRanges(low, end, size)
      .flatMap(([first, final]) =>
        sql
          .exec<EventRow>(
            ring === "audit"
              ? `SELECT seq, at, type, detail FROM audit WHERE slot BETWEEN ? AND ?
                 AND ring_seq BETWEEN ? AND ? AND seq > ? AND at > ? ORDER BY slot`
              : `SELECT seq, at, type, detail FROM audit_kept WHERE slot BETWEEN ? AND ?
                 AND ring_seq BETWEEN ? AND ? AND seq > ? AND at > ? ORDER BY slot`,
            first,
            final,
            low,
            end,
            cmd.after,
            cutoff,
          )
          .toArray(),
      )
      .sort((a, b) => a.seq - b.seq);
    return { rows, more: end < newest };
  }

  /**
   * The counters are read from storage again at next use: after a transaction that threw (its
   * appends may have rolled back, and counters left past them would leave a hole), or storage was
   * wiped (the session was deleted: the next lifetime starts at seq 1).
   */
  reload(): void {
    this.counters = null;
  }

  /** Storage was wiped (the session was deleted): the next lifetime starts at seq 1. */
  forget(): void {
    this.counters = null;
  }
}
