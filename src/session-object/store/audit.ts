// The audit trail in the session object's SQLite: one append-only table, `audit_events`, a row per
// event, read in pages by seq. Deleting what passed the bounds is the alarm's (`trim_audit`).
import type { AuditEvent, StoredEvent } from "../../domain/audit";
import type { Write } from "../../domain/decision";
import type { Writers } from "./columns";

interface Bounds {
  readonly auditMaxEvents: number;
  readonly auditRetentionMs: number;
}

/**
 * What an operator must be able to find a week later, whatever else happened meanwhile: accepted
 * completions, delivery attempts, operator actions, ceilings and the agent's cancels. None can be
 * flooded: each is bounded by what the session really did (a job's one completion, one attempt
 * per resume try, one operator action per request an operator made, one ceiling per wait's end,
 * one cancel per running job), where a stale runner's refused completions are unlimited. Records
 * and the rest (noise) are capped apart, so no flood of noise pushes a record out.
 */
export const isRecord = (event: AuditEvent): boolean =>
  (event.type === "completion" && event.outcome === "accepted") ||
  event.type === "delivery" ||
  event.type === "operator" ||
  event.type === "ceiling" ||
  event.type === "cancel";

/** Events one trim deletes at most: an alarm run stays short, the next run takes the rest. */
export const TRIM_BATCH = 500;

/**
 * How far the table may run past a bound before a trim is due: a tenth of it. A full trail then
 * costs one alarm per batch of events, not one per event; reads hide what waits meanwhile.
 */
const slackOf = (bound: number): number => Math.ceil(bound / 10);

export type TrimAudit = Extract<Write, { type: "trim_audit" }>;

/** Per kind (records or noise): its newest `kind_seq`, and how many of its events the table holds. */
type Kind = { last: number; count: number };

/** What the table holds, read once per object start, and again after a trim or a rollback. */
interface Tally {
  /** The newest seq; 0 while the table is empty. */
  seq: number;
  noise: Kind;
  records: Kind;
  /** The time of the oldest event by seq; null while the table is empty. */
  firstAt: number | null;
}

type TallyRow = {
  seq: number;
  first_at: number | null;
  noise_last: number;
  records_last: number;
  noise: number;
  records: number;
};

// One walk of the table (kept small by the trim): no index, which would cost a second written row
// per event.
const TALLY = `SELECT COALESCE(MAX(seq), 0) AS seq,
    (SELECT at FROM audit_events ORDER BY seq LIMIT 1) AS first_at,
    COALESCE(MAX(kind_seq) FILTER (WHERE record = 0), 0) AS noise_last,
    COALESCE(MAX(kind_seq) FILTER (WHERE record = 1), 0) AS records_last,
    COUNT(*) FILTER (WHERE record = 0) AS noise,
    COUNT(*) FILTER (WHERE record = 1) AS records
  FROM audit_events`;

const APPEND = `INSERT INTO audit_events (seq, at, type, record, kind_seq, detail)
  VALUES (?, ?, ?, ?, ?, ?)`;

// What a reader may see: after the cursor, not expired, and among the newest AUDIT_MAX_EVENTS of
// its kind. The last test hides what passed the cap before the alarm trimmed it.
const PAGE = `SELECT seq, at, type, detail FROM audit_events
  WHERE seq > ?1 AND at > ?2 AND kind_seq > CASE record WHEN 1 THEN ?3 ELSE ?4 END
  ORDER BY seq LIMIT ?5`;

// Oldest first, what no reader can see any more. The newest event always stays, even expired, so
// the numbering goes on from it after a quiet week.
const TRIM = `DELETE FROM audit_events WHERE seq IN (
    SELECT seq FROM audit_events
    WHERE seq < ?1 AND (at <= ?2 OR kind_seq <= CASE record WHEN 1 THEN ?3 ELSE ?4 END)
    ORDER BY seq LIMIT ?5)`;

type EventRow = { seq: number; at: number; type: string; detail: string };

const decode = (row: EventRow): StoredEvent =>
  ({
    seq: row.seq,
    at: new Date(row.at).toISOString(),
    type: row.type,
    ...JSON.parse(row.detail),
  }) as StoredEvent;

/** The trail's one write: a `trim_audit`, inside the caller's transaction. */
export const AUDIT_WRITERS: Writers<"trim_audit"> = {
  trim_audit: (sql, trim) =>
    void sql.exec(TRIM, trim.newestSeq, trim.expiredBy, trim.recordsUpTo, trim.noiseUpTo, trim.max),
};

export class AuditTrail {
  private tally: Tally | null = null;

  constructor(private readonly bounds: Bounds) {}

  private tallied(sql: SqlStorage): Tally {
    if (this.tally === null) {
      const row = sql.exec<TallyRow>(TALLY).one();
      this.tally = {
        seq: row.seq,
        noise: { last: row.noise_last, count: row.noise },
        records: { last: row.records_last, count: row.records },
        firstAt: row.first_at,
      };
    }
    return this.tally;
  }

  /** Appends inside the caller's transaction: the event commits with the change it records. */
  append(sql: SqlStorage, now: number, event: AuditEvent): void {
    const tally = this.tallied(sql);
    const record = isRecord(event);
    const kind = record ? tally.records : tally.noise;
    const { type, ...detail } = event;
    sql.exec(
      APPEND,
      tally.seq + 1,
      now,
      type,
      record ? 1 : 0,
      kind.last + 1,
      JSON.stringify(detail),
    );
    tally.seq += 1;
    kind.last += 1;
    kind.count += 1;
    tally.firstAt ??= now;
  }

  /** Events after `after`, oldest first: at most `limit`, and `next_after` when more remain. */
  page(
    sql: SqlStorage,
    now: number,
    cmd: { after: number; limit: number },
  ): { events: StoredEvent[]; next_after: number | null } {
    const tally = this.tallied(sql);
    const { auditMaxEvents: cap, auditRetentionMs: retention } = this.bounds;
    const rows = sql
      .exec<EventRow>(
        PAGE,
        cmd.after,
        now - retention,
        tally.records.last - cap,
        tally.noise.last - cap,
        cmd.limit + 1,
      )
      .toArray();
    const events = rows.slice(0, cmd.limit);
    const more = rows.length > cmd.limit;
    return { events: events.map(decode), next_after: more ? (events.at(-1)?.seq ?? null) : null };
  }

  /**
   * When a trim is due: now, once a kind holds more than its cap and slack; else when the oldest
   * event has been expired for the slack. Null when nothing will need deleting.
   */
  trimDueAt(sql: SqlStorage, now: number): number | null {
    const tally = this.tallied(sql);
    const { auditMaxEvents: cap, auditRetentionMs: retention } = this.bounds;
    const over = (kind: Kind) => kind.count > cap + slackOf(cap);
    if (over(tally.noise) || over(tally.records)) return now;
    // The newest event is never deleted: alone, it makes no trim due.
    if (tally.firstAt === null || tally.noise.count + tally.records.count < 2) return null;
    return tally.firstAt + retention + slackOf(retention);
  }

  /** The write that trims the trail now, when a trim is due; null when none is. */
  trimWrite(sql: SqlStorage, now: number): TrimAudit | null {
    const due = this.trimDueAt(sql, now);
    if (due === null || due > now) return null;
    const tally = this.tallied(sql);
    const { auditMaxEvents: cap, auditRetentionMs: retention } = this.bounds;
    return {
      type: "trim_audit",
      expiredBy: now - retention,
      noiseUpTo: tally.noise.last - cap,
      recordsUpTo: tally.records.last - cap,
      newestSeq: tally.seq,
      max: TRIM_BATCH,
    };
  }

  /** The table was made empty just now (a new schema): the tally needs no read to know it. */
  startEmpty(): void {
    this.tally = {
      seq: 0,
      noise: { last: 0, count: 0 },
      records: { last: 0, count: 0 },
      firstAt: null,
    };
  }

  /**
   * The tally is read from storage again at next use: after a transaction that threw (its appends
   * may have rolled back, and counters left past them would leave a hole), after a trim, or after
   * storage was wiped (the next lifetime starts at seq 1).
   */
  reload(): void {
    this.tally = null;
  }
}
