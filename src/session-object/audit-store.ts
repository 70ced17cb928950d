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
// event). A record whose commit writes the session row anyway waits there (`audit_held`) for the
// next record, and the two share one row of the records ring (`second`): a wake's completion and
// its delivery attempt are one row written, not two (docs/decisions.md 820).
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

/**
 * One event with its seq and time: the JSON of `session.audit_held` (the record waiting for the
 * next) and of a records row's `second` column. `detail` is the event's fields as JSON text.
 */
type Held = EventRow;

/** A records-ring row: its first event, and the one that shared its row (JSON of Held), if any. */
type KeptRow = EventRow & { ring_seq: number; second: string | null };

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

/** The events of a records row whose positions lie in low..end: its first, and its second. */
function eventsOf(row: KeptRow, low: number, end: number): EventRow[] {
  const { ring_seq: position, second, ...first } = row;
  const events: EventRow[] = [];
  if (position >= low && position <= end) events.push(first);
  if (second !== null && position + 1 >= low && position + 1 <= end)
    events.push(JSON.parse(second) as Held);
  return events;
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
  /** The record waiting in the session row for the next one; its seq is taken, its position not. */
  private held: Held | null = null;
  /** `held` as the session row stores it, made once per held record (read twice per commit). */
  private heldJson: string | null = null;

  constructor(private readonly bounds: Bounds) {}

  private last(sql: SqlStorage): { seq: number; noise: number; kept: number } {
    if (this.counters === null) {
      const noise = sql
        .exec<Last>(
          "SELECT COALESCE(MAX(seq), 0) AS seq, COALESCE(MAX(ring_seq), -1) AS ring FROM audit",
        )
        .one();
      // A row that carries a second event holds two positions and two seqs.
      const kept = sql
        .exec<Last>(
          `SELECT COALESCE(MAX(COALESCE(second ->> '$.seq', seq)), 0) AS seq,
             COALESCE(MAX(ring_seq + (second IS NOT NULL)), -1) AS ring FROM audit_kept`,
        )
        .one();
      const seq = Math.max(noise.seq, kept.seq, this.held?.seq ?? 0);
      this.counters = { seq, noise: noise.ring, kept: kept.ring };
    }
    return this.counters;
  }

  /** The session row's `audit_held` as the store has it now (null: no record waits). */
  get heldText(): string | null {
    return this.heldJson;
  }

  /** The session row's `audit_held` as loaded (object start, or after a rollback). */
  adopt(heldText: string | null): void {
    this.held = heldText === null ? null : (JSON.parse(heldText) as Held);
    this.heldJson = heldText;
    this.counters = null;
  }

  /**
   * Appends inside the caller's transaction: the event commits with the change it records. With
   * `hold` (the commit writes the session row anyway) a record may wait there instead of taking a
   * row; a record that finds one waiting shares its row. The caller writes `heldText` into the
   * session row in the same transaction whenever it changed.
   */
  append(sql: SqlStorage, now: number, event: AuditEvent, hold = false): void {
    const counters = this.last(sql);
    const seq = counters.seq + 1;
    const { type, ...detail } = event;
    const own: Held = { seq, at: now, type, detail: JSON.stringify(detail) };
    if (!isRecord(event)) {
      const ring = counters.noise + 1;
      // REPLACE over a slot of a table without a secondary index overwrites the row in place (one
      // row written), and compiles one half where the upsert compiled two, both kept prepared.
      sql.exec(
        "REPLACE INTO audit (slot, ring_seq, seq, at, type, detail) VALUES (?, ?, ?, ?, ?, ?)",
        ring % this.bounds.auditMaxEvents,
        ring,
        seq,
        now,
        type,
        own.detail,
      );
      this.counters = { ...counters, seq, noise: ring };
      return;
    }
    if (this.held === null && hold) {
      this.held = own;
      this.heldJson = JSON.stringify(own);
      this.counters = { ...counters, seq };
      return;
    }
    // The waiting record first, at the next position; this one second, at the one after it.
    const [first, second] = this.held === null ? [own, null] : [this.held, own];
    const ring = counters.kept + 1;
    sql.exec(
      "REPLACE INTO audit_kept (slot, ring_seq, seq, at, type, detail, second) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ring % this.bounds.auditMaxEvents,
      ring,
      first.seq,
      first.at,
      first.type,
      first.detail,
      second === null ? null : JSON.stringify(second),
    );
    this.held = null;
    this.heldJson = null;
    this.counters = { ...counters, seq, kept: second === null ? ring : ring + 1 };
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
    const held = this.held;
    // A waiting record is the ring's newest: the ring then shows one fewer, so it never shows
    // more than AUDIT_MAX_EVENTS records (the oldest one goes when the waiting one takes its row).
    const kept = this.after(sql, "audit_kept", counters.kept, cmd, cutoff, newer, held ? 1 : 0);
    const noise = this.after(sql, "audit", counters.noise, cmd, cutoff, newer, 0);
    const waiting = held !== null && held.seq > cmd.after && held.at > cutoff ? [held] : [];
    const merged = [...kept.rows, ...noise.rows, ...waiting].sort((a, b) => a.seq - b.seq);
    const events = merged.slice(0, cmd.limit);
    // More remain if the merge passed `limit`, or a ring's read stopped short of its newest.
    const more = merged.length > cmd.limit || kept.more || noise.more;
    return { events: events.map(decode), next_after: more ? (events.at(-1)?.seq ?? null) : null };
  }

  /**
   * Up to `limit` events of a ring with seq > after and time > cutoff, oldest first, and whether
   * the ring holds more past them: a binary search for the first such position (among the newest
   * `newer` positions at most), then one range read. A position's event is the first of the row
   * in its slot, or the second of the row before it (a records row may carry two); a position
   * whose event is gone (empty, a lap older, overwritten) counts as before the page, and the read
   * is filtered again by position, seq and time.
   */
  private after(
    sql: SqlStorage,
    ring: Ring,
    newest: number,
    cmd: { after: number; limit: number },
    cutoff: number,
    newer: number,
    shrink: number,
  ): { rows: EventRow[]; more: boolean } {
    const size = this.bounds.auditMaxEvents;
    const none = { rows: [], more: false };
    if (newest < 0 || newer <= 0) return none;
    const slotRow = (position: number) =>
      sql
        .exec<{ ring_seq: number; seq: number; at: number; second?: string | null }>(
          ring === "audit"
            ? "SELECT ring_seq, seq, at FROM audit WHERE slot = ?"
            : "SELECT ring_seq, seq, at, second FROM audit_kept WHERE slot = ?",
          position % size,
        )
        .toArray()[0];
    const eventAt = (position: number): { seq: number; at: number } | null => {
      const row = slotRow(position);
      if (row !== undefined && row.ring_seq === position) return row;
      if (ring === "audit" || position === 0) return null;
      const before = slotRow(position - 1);
      if (before?.ring_seq !== position - 1 || typeof before.second !== "string") return null;
      return JSON.parse(before.second) as Held;
    };
    const wanted = (position: number): boolean => {
      const event = eventAt(position);
      return event !== null && event.seq > cmd.after && event.at > cutoff;
    };
    let low = Math.max(0, newest - size + 1 + shrink, newest - newer + 1);
    let high = newest;
    if (low > high || !wanted(high)) return none;
    // Where the ring's seqs run without gaps (a burst of one kind), the lowest possible position is
    // the answer: one read instead of the search's log₂.
    if (low < high && wanted(low)) high = low;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      if (wanted(middle)) high = middle;
      else low = middle + 1;
    }
    const end = Math.min(newest, low + cmd.limit - 1);
    // The row before `low` may carry low's event as its second; its slot is among the range's
    // own when the range spans the whole ring.
    const from = ring === "audit" ? low : Math.max(0, low - 1, end - size + 1);
    const rows = slotRanges(from, end, size)
      .flatMap(([first, final]) =>
        ring === "audit"
          ? sql
              .exec<EventRow>(
                `SELECT seq, at, type, detail FROM audit WHERE slot BETWEEN ? AND ?
                 AND ring_seq BETWEEN ? AND ? AND seq > ? AND at > ? ORDER BY slot`,
                first,
                final,
                low,
                end,
                cmd.after,
                cutoff,
              )
              .toArray()
          : sql
              .exec<KeptRow>(
                `SELECT ring_seq, seq, at, type, detail, second FROM audit_kept
                 WHERE slot BETWEEN ? AND ? AND ring_seq BETWEEN ? AND ? ORDER BY slot`,
                first,
                final,
                Math.max(0, low - 1),
                end,
              )
              .toArray()
              .flatMap((row) => eventsOf(row, low, end)),
      )
      .filter((row) => row.seq > cmd.after && row.at > cutoff)
      .sort((a, b) => a.seq - b.seq);
    return { rows, more: end < newest };
  }

  /**
   * The counters are read from storage again at next use: after a transaction that threw (its
   * appends may have rolled back, and counters left past them would leave a hole), or storage was
   * wiped (the session was deleted: the next lifetime starts at seq 1).
   */
  reload(heldText: string | null = null): void {
    this.adopt(heldText);
  }

  /** Storage was wiped (the session was deleted): the next lifetime starts at seq 1. */
  forget(): void {
    this.adopt(null);
  }
}
