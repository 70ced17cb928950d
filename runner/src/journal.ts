// The runner's on-disk journal of handed-out ids, armed callbacks and computed results (JSON lines,
// fsynced, owner-only). Replaying it after a restart tells which completions are still owed.
import {
  appendFileSync,
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { CompletionBody } from "./completion";

/** Persisted shape (one JSON object per line); evolve by adding types or optional fields. */
type JournalRecord =
  | { type: "ids"; through: number; at: number }
  | {
      type: "armed";
      session_id: string;
      url: string;
      token: string;
      command: string;
      at: number;
      /** What the arm said about liveness (absent in older journals and older arms). */
      heartbeat_url?: string | null;
      heartbeat_timeout_ms?: number | null;
    }
  | { type: "result"; session_id: string; body: CompletionBody; at: number }
  /** A part of the result's full output that exec-inbox took (201). */
  | { type: "part"; session_id: string; index: number; at: number }
  /** exec-inbox holds none of the parts it was sent (its completion said so): send them again. */
  | { type: "parts_reset"; session_id: string; at: number }
  | {
      type: "done";
      session_id: string;
      outcome: "delivered" | "refused" | "abandoned";
      status: number;
      at: number;
    };

export interface PendingCallback {
  readonly sessionId: string;
  readonly url: string;
  readonly token: string;
  readonly command: string;
  readonly body: CompletionBody | null;
  /** When the result was recorded (else armed): the give-up window counts from here. */
  readonly since: number;
  readonly heartbeat_url?: string | null;
  readonly heartbeat_timeout_ms?: number | null;
  /** Parts of the result's full output already uploaded (absent: none). */
  readonly uploadedParts?: readonly number[];
}

/** Ids are reserved in blocks: one fsync per block, and a crash can only skip ids, never reuse one. */
const ID_BLOCK = 100;
const FIRST_ID = 1000;
/** Past this many appended bytes the journal is rewritten with only what is still owed. */
const COMPACT_AFTER_BYTES = 16 * 1024 * 1024;

export class Journal {
  private readonly file: string;
  private readonly pendingById = new Map<string, PendingCallback>();
  private lastId = FIRST_ID;
  private reservedThrough = FIRST_ID;
  private appendedBytes = 0;

  constructor(
    private readonly dir: string,
    log: (line: string) => void = () => {},
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // mkdir's mode is ignored for a directory that already exists: enforce it.
    chmodSync(dir, 0o700);
    this.file = join(dir, "callbacks.jsonl");
    const { records, skipped } = readRecords(this.file);
    if (skipped > 0) log(`journal: skipped ${skipped} torn or unreadable line(s)`);
    for (const record of records) this.fold(record);
    this.lastId = this.reservedThrough;
    // Rewriting on open drops a torn last line (a crash mid-write) so the next record starts a line.
    this.compact();
  }

  /** The next process id, journaled before the process exists. */
  nextSessionId(): string {
    this.lastId += 1;
    if (this.lastId > this.reservedThrough) {
      this.append({ type: "ids", through: this.lastId + ID_BLOCK - 1, at: Date.now() });
    }
    return String(this.lastId);
  }

  append(record: JournalRecord): void {
    const line = `${JSON.stringify(record)}\n`;
    const fd = openSync(this.file, "a", 0o600);
    try {
      appendFileSync(fd, line);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.fold(record);
    this.appendedBytes += Buffer.byteLength(line);
    if (this.appendedBytes > COMPACT_AFTER_BYTES) this.compact();
  }

  /** Callbacks armed but not yet delivered, refused or abandoned, with their result if computed. */
  pending(): PendingCallback[] {
    return [...this.pendingById.values()];
  }

  /** Keeps a result nobody took where an operator can resend it by hand. */
  deadLetter(pending: PendingCallback, body: CompletionBody, reason: string): void {
    const fd = openSync(join(this.dir, "dead-letter.jsonl"), "a", 0o600);
    try {
      const entry = { ...pending, body, reason, at: Date.now() };
      appendFileSync(fd, `${JSON.stringify(entry)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  private fold(record: JournalRecord): void {
    switch (record.type) {
      case "ids":
        this.reservedThrough = Math.max(this.reservedThrough, record.through);
        return;
      case "armed":
        this.reservedThrough = Math.max(this.reservedThrough, Number(record.session_id) || 0);
        this.pendingById.set(record.session_id, {
          sessionId: record.session_id,
          url: record.url,
          token: record.token,
          command: record.command,
          body: null,
          since: record.at,
          heartbeat_url: record.heartbeat_url,
          heartbeat_timeout_ms: record.heartbeat_timeout_ms,
        });
        return;
      case "result": {
        const armed = this.pendingById.get(record.session_id);
        if (armed)
          this.pendingById.set(record.session_id, {
            ...armed,
            body: record.body,
            since: record.at,
          });
        return;
      }
      case "part": {
        const pending = this.pendingById.get(record.session_id);
        if (pending) {
          const parts = new Set(pending.uploadedParts ?? []).add(record.index);
          this.pendingById.set(record.session_id, { ...pending, uploadedParts: [...parts] });
        }
        return;
      }
      case "parts_reset": {
        const pending = this.pendingById.get(record.session_id);
        if (pending) this.pendingById.set(record.session_id, { ...pending, uploadedParts: [] });
        return;
      }
      case "done":
        this.pendingById.delete(record.session_id);
        return;
    }
  }

  /** Writes what is still owed to a new file, then renames it over the old one (atomic on POSIX). */
  private compact(): void {
    const lines: JournalRecord[] = [{ type: "ids", through: this.reservedThrough, at: Date.now() }];
    for (const pending of this.pendingById.values()) {
      const { sessionId, url, token, command, body, since, uploadedParts, ...liveness } = pending;
      lines.push({
        type: "armed",
        session_id: sessionId,
        url,
        token,
        command,
        at: since,
        ...liveness,
      });
      if (body !== null) lines.push({ type: "result", session_id: sessionId, body, at: since });
      for (const index of uploadedParts ?? []) {
        lines.push({ type: "part", session_id: sessionId, index, at: since });
      }
    }
    const next = `${this.file}.next`;
    const fd = openSync(next, "w", 0o600);
    try {
      writeFileSync(fd, lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(next, 0o600);
    renameSync(next, this.file);
    const dirFd = openSync(this.dir, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
    this.appendedBytes = 0;
  }
}

function readRecords(file: string): { records: JournalRecord[]; skipped: number } {
  if (!existsSync(file)) return { records: [], skipped: 0 };
  const records: JournalRecord[] = [];
  let skipped = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      records.push(JSON.parse(line) as JournalRecord);
    } catch {
      // A line torn by a crash mid-write: its callback was not armed (no 202) or not yet sent.
      skipped += 1;
    }
  }
  return { records, skipped };
}
