// Sends one session's index entry to D1 after the commits that change it, off the request path,
// and again after a failed write or a restart: a contributor of the scheduler. What the entry
// holds, and how long a wake's entry waits, is the domain's; the loop hands it the entry after each
// commit and keeps alive the work each call returns.
import { type IndexEntry, sameEntry, sendableAt, WAKE_SETTLE_MS } from "../domain/index-entry";
import { removeEntry, upsertEntry } from "../session-index/index-store";
import type { AlarmContributor } from "./scheduler";
import type { Store } from "./store/store";

/** Where entries go; replaceable, so a test can drop every update on the floor. */
interface IndexWriter {
  /** `listed`: what the row is known to hold, so an unchanged key can be left alone. */
  upsert(
    entry: IndexEntry,
    version: number,
    now: number,
    listed: IndexEntry | null,
  ): Promise<number>;
  remove(tenant: string, sessionId: string): Promise<void>;
}

export const d1Writer = (db: D1Database): IndexWriter => ({
  upsert: (entry, version, now, listed) => upsertEntry(db, entry, version, now, listed),
  remove: (tenant, sessionId) => removeEntry(db, tenant, sessionId),
});

/** Commits within this window go out as one write: a burst of completions costs one D1 write. */
const FLUSH_DELAY_MS = 100;
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 5 * 60 * 1_000;
const REMOVE_ATTEMPTS = 3;
/**
 * The alarm kept for a held entry fires this long after its window: the live object's own timer
 * sends the entry first and moves the alarm on, so only an object that did not live to send it
 * (closed or restarted inside the window) costs an alarm invocation.
 */
const ALARM_GRACE_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * What a call set going: work to keep alive past the request (`waitUntil`), resolving to whether
 * the alarm's time for the index moved (a failed write's retry, a held entry sent), so the caller
 * arms it again. Null: nothing was set going.
 */
export type IndexWork = Promise<boolean> | null;

/** What one attempt to send came to: sent or not needed, failed, or held until a time. */
type Sent = "done" | "failed" | { heldUntil: number };

export class Indexer implements AlarmContributor {
  /** When a failed write is due again; the object's alarm waits for it too. Null: nothing owed. */
  retryAt: number | null = null;
  /** D1 rows written by this object's updates since it started (for the benchmark). */
  rowsWritten = 0;
  /** D1 upserts this object made since it started (each one statement; for the benchmark). */
  writes = 0;
  /** How long a wake's entry waits for the run that usually takes it. */
  settleMs = WAKE_SETTLE_MS;
  /** The entry as of the last commit, its inbox not counted (null: no session). */
  private keys: IndexEntry | null = null;
  private lastSent: IndexEntry | null = null;
  private lastVersion = 0;
  private failures = 0;
  private flushScheduled = false;
  /** A wake's entry is held back and a flush is set for when its window ends. */
  private held = false;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    /** Null when the index is off (`INDEX_UPDATES=off`, or no `INDEX` binding). */
    public writer: IndexWriter | null,
    /** Where the inbox is counted, for an entry that is listed. */
    private readonly store: Pick<Store, "countPending">,
  ) {}

  /**
   * After a commit, with the session's entry (`indexEntryOf` with the inbox uncounted): it goes out
   * shortly if it differs from the last one sent, the inbox counted as it goes.
   */
  changed(keys: IndexEntry | null): IndexWork {
    this.keys = keys;
    if (this.writer === null || this.flushScheduled) return null;
    this.flushScheduled = true;
    return sleep(FLUSH_DELAY_MS).then(() => {
      this.flushScheduled = false;
      return this.flush(false);
    });
  }

  /**
   * After a load, or when a reader found the row stale: what the index holds is unknown, so the
   * entry goes out whole with the next flush (D1 skips the write when the row already holds it).
   * Not at once: the commit that usually follows a load (the completion that woke the object)
   * shares the one statement, and a wake's entry still waits out its window.
   */
  resend(keys: IndexEntry | null): IndexWork {
    this.lastSent = null;
    return this.changed(keys);
  }

  /** The entry as it goes out now: the inbox is counted only for a session that is listed. */
  entryNow(): IndexEntry | null {
    const keys = this.keys;
    if (keys === null || keys.detail === null) return keys;
    const pending = this.store.countPending(Date.now());
    return { ...keys, detail: { ...keys.detail, inbox_pending: pending } };
  }

  /**
   * When the object's alarm must fire for the index: a failed write's retry, or the end of a wake's
   * window. The window is thus kept by the alarm too, not only by this object's timer: an object
   * closed or restarted inside it still lists its session `resuming` when it ends. The alarm a
   * wake's commit arms anyway takes that time, so a run that claims within the window costs no
   * alarm move of its own.
   */
  nextAt(): number | null {
    const held = this.heldUntil();
    const fallback = held === null ? null : held + ALARM_GRACE_MS;
    if (fallback === null) return this.retryAt;
    return this.retryAt === null ? fallback : Math.min(fallback, this.retryAt);
  }

  /** From the alarm: a failed write whose time has come is tried again, a held one sent. */
  async onAlarm(): Promise<void> {
    const now = Date.now();
    // An entry a new wake holds back meanwhile is not waited for here: the alarm, set again after
    // this, is its fallback, and no alarm handler sleeps through a window.
    if (this.retryAt !== null && this.retryAt <= now) {
      await this.flush(true, false);
      return;
    }
    const held = this.heldUntil();
    if (held !== null && held <= now) await this.flush(false, false);
  }

  /** When a wake's entry, held back, may go out; null when none is held. */
  private heldUntil(): number | null {
    if (this.writer === null || this.keys === null) return null;
    return sendableAt(this.keys, this.lastSent, this.settleMs);
  }

  /** The session was deleted: its row goes, after any write already on its way. */
  removed(tenant: string, sessionId: string): IndexWork {
    this.keys = null;
    this.lastSent = null;
    this.retryAt = null;
    this.failures = 0;
    if (this.writer === null) return null;
    const attempt = async (left: number): Promise<void> => {
      try {
        await this.writer?.remove(tenant, sessionId);
      } catch (error) {
        console.error(`index: removing ${tenant}/${sessionId} failed`, error);
        // A row left behind is dropped by the list route when its object answers "not found".
        if (left > 1) {
          await sleep(RETRY_MIN_MS);
          await attempt(left - 1);
        }
      }
    };
    return this.serially(() => attempt(REMOVE_ATTEMPTS)).then(() => false);
  }

  /** Versions grow across restarts without being stored: the clock in µs, bumped past the last. */
  private nextVersion(now: number): number {
    this.lastVersion = Math.max(this.lastVersion + 1, now * 1000);
    return this.lastVersion;
  }

  /** One write at a time, in commit order: an older entry can never land after a newer one. */
  private serially<T>(task: () => Promise<T>): Promise<T> {
    const turn = this.queue.then(task);
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Sends the entry, or holds it until its window ends: one flush then, commits before then only
   * re-decide. In memory only: an object closed inside the window sends its entry when it loads
   * again (the claim, or its next timer). Resolves to whether the alarm must be armed again.
   */
  private async flush(force: boolean, waitHold = true): Promise<boolean> {
    const sent = await this.serially(() => this.send(force));
    if (typeof sent === "string") return sent === "failed";
    if (this.held || !waitHold) return false;
    this.held = true;
    await sleep(Math.max(0, sent.heldUntil - Date.now()));
    this.held = false;
    await this.flush(false);
    // Sent: the alarm waiting as this hold's fallback moves on before it fires.
    return true;
  }

  private async send(force: boolean): Promise<Sent> {
    const writer = this.writer;
    if (writer === null) return "done";
    const now = Date.now();
    try {
      // Read inside the try: a read that fails (SQLite out of memory) is retried like a write.
      const entry = this.entryNow();
      if (entry === null) return "done";
      if (!force && this.retryAt === null && sameEntry(entry, this.lastSent)) return "done";
      // The alarm's retry does not wait: its write is owed already.
      const at = force ? null : sendableAt(entry, this.lastSent, this.settleMs);
      if (at !== null && at > now) return { heldUntil: at };
      // A retry does not trust `lastSent`: the failed write may have landed.
      const listed = force ? null : this.lastSent;
      this.rowsWritten += await writer.upsert(entry, this.nextVersion(now), now, listed);
      this.writes += 1;
      this.lastSent = entry;
      this.retryAt = null;
      this.failures = 0;
      return "done";
    } catch (error) {
      this.failures += 1;
      const backoff = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (this.failures - 1));
      this.retryAt = Date.now() + backoff;
      console.error(
        `index: update failed (${this.failures} in a row); retrying in ${backoff} ms`,
        error,
      );
      return "failed";
    }
  }
}
