// Where the agent host keeps its durable record of each session (session-record.ts). The example
// host keeps every session in one SQLite database (node:sqlite) under its state directory; a host
// with its own database implements `ConversationStore`.
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { ModelMessage } from "ai";
import { readJsonConversations } from "./json-conversations";
import type { SessionRecord } from "./session-record";

// The record is its own module so that the JSON-file reader can name it without importing the
// store; this subpath (`@exec-inbox/ai-sdk/conversation-store`) still names it.
export type { ActiveRun, SessionRecord } from "./session-record";

export interface ConversationStore<M = ModelMessage> {
  load(sessionId: string): Promise<SessionRecord<M> | undefined>;
  save(record: SessionRecord<M>): Promise<void>;
  delete(sessionId: string): Promise<void>;
  list(): Promise<string[]>;
}

/** The database's file name inside the host's state directory. */
export const CONVERSATION_DATABASE = "conversations.sqlite";

/** How long a statement waits for a lock another connection holds (an operator's `sqlite3`). */
const BUSY_TIMEOUT_MS = 5_000;

const DAMAGED_ADVICE =
  ". The host does not start over a damaged store: restore the file from a backup, or move it" +
  " (with its -wal file) aside to start with no conversations.";

class DamagedDatabase extends Error {}

/**
 * Ordered and frozen: a shipped entry is never edited, a change is a new entry. `PRAGMA
 * user_version` holds the version applied, set in the transaction that applies it.
 */
const MIGRATIONS: ReadonlyArray<{ version: number; description: string; sql: string }> = [
  {
    version: 1,
    description: "sessions, and their messages one row each",
    sql: `
      CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        -- The record but its messages, as JSON (SessionRecord: fields are only ever added).
        state TEXT NOT NULL,
        message_count INTEGER NOT NULL,
        -- sha256 over the stored messages: a save that extends them appends the new ones only.
        messages_digest TEXT NOT NULL
      ) STRICT;
      CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) STRICT;`,
  },
];
const SCHEMA_VERSION = MIGRATIONS.length;

/** Every statement the store runs, prepared once the schema is there. */
function prepareStatements(db: DatabaseSync) {
  return {
    head: db.prepare("SELECT message_count, messages_digest FROM sessions WHERE session_id = ?"),
    state: db.prepare("SELECT state FROM sessions WHERE session_id = ?"),
    messages: db.prepare("SELECT body FROM messages WHERE session_id = ? ORDER BY seq"),
    ids: db.prepare("SELECT session_id FROM sessions ORDER BY session_id"),
    upsertSession: db.prepare(
      `INSERT INTO sessions (session_id, state, message_count, messages_digest) VALUES (?, ?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET state = excluded.state,
         message_count = excluded.message_count, messages_digest = excluded.messages_digest`,
    ),
    insertMessage: db.prepare("INSERT INTO messages (session_id, seq, body) VALUES (?, ?, ?)"),
    deleteMessages: db.prepare("DELETE FROM messages WHERE session_id = ?"),
    deleteSession: db.prepare("DELETE FROM sessions WHERE session_id = ?"),
  };
}

/** Brings the schema to SCHEMA_VERSION, in the caller's transaction; returns the version found. */
function migrate(db: DatabaseSync): number {
  const { user_version: version } = db.prepare("PRAGMA user_version").get() as {
    user_version: number;
  };
  if (version > SCHEMA_VERSION) {
    throw new Error(
      `schema version ${version} is newer than this host's ${SCHEMA_VERSION}: a newer host wrote it, run that one`,
    );
  }
  for (const migration of MIGRATIONS.filter((m) => m.version > version)) {
    db.exec(migration.sql);
    db.exec(`PRAGMA user_version = ${migration.version}`);
  }
  return version;
}

/**
 * The digest of all `texts`, and of the first `at` of them (undefined past the end). JSON has no
 * raw newline, so one between messages keeps their boundaries in the digest.
 */
function digests(texts: string[], at: number): { prefix: string | undefined; full: string } {
  const hash = createHash("sha256");
  let prefix: string | undefined;
  texts.forEach((text, index) => {
    if (index === at) prefix = hash.copy().digest("base64");
    hash.update(text).update("\n");
  });
  const full = hash.digest("base64");
  return { prefix: at === texts.length ? full : prefix, full };
}

export class SqliteConversationStore<M = ModelMessage> implements ConversationStore<M> {
  /** Sessions imported at this start from the JSON files of the earlier host (0 after the first). */
  readonly imported: number;
  private readonly db: DatabaseSync;
  private readonly sql: ReturnType<typeof prepareStatements>;

  /** Opens (or creates) `<stateDir>/conversations.sqlite`; a damaged database throws here. */
  constructor(stateDir: string) {
    const path = join(stateDir, CONVERSATION_DATABASE);
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    // Made owner-only before SQLite opens it: its -wal and -shm files take the database's mode.
    closeSync(openSync(path, "a", 0o600));
    this.db = new DatabaseSync(path, {
      timeout: BUSY_TIMEOUT_MS,
      // A deleted session's messages go with it (ON DELETE CASCADE).
      enableForeignKeyConstraints: true,
    });
    try {
      // WAL with synchronous=FULL: a commit appends the turn to the write-ahead log and fsyncs it
      // before `save` returns. A SIGKILL of the host cannot undo it (the kernel holds the write),
      // and neither can power loss (the fsync), as with the fsynced files of the JSON-file host;
      // synchronous=NORMAL would keep the first, not the second. A crash mid-commit leaves a log
      // frame without its commit mark, which the next open ignores: the turn before it stays.
      // WAL over the rollback journal: one fsync per commit, and readers never block the writer.
      this.db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL");
      // Every page, once per start: a damaged file stops the host here, before it answers a
      // resume with a conversation that has silently lost turns.
      const found = this.db
        .prepare("PRAGMA quick_check")
        .all()
        .map((row) => row.quick_check);
      if (found.join() !== "ok") {
        const lines = found.join("\n").split("\n");
        throw new DamagedDatabase(`the database is malformed (${lines.slice(0, 4).join("; ")}…)`);
      }
      // One transaction: a new database gets its schema and the JSON-file host's sessions both,
      // or neither (a JSON file that does not parse stops this start, and the next one retries).
      this.db.exec("BEGIN IMMEDIATE");
      const version = migrate(this.db);
      this.sql = prepareStatements(this.db);
      const records = version === 0 ? readJsonConversations<M>(stateDir) : [];
      for (const record of records) this.write(record);
      this.db.exec("COMMIT");
      this.imported = records.length;
    } catch (error) {
      // Closing rolls back what the failed start began.
      this.db.close();
      // SQLite's own errors here (`file is not a database`, `database disk image is malformed`)
      // and the check's mean a damaged file; the others say what to do themselves.
      const damaged =
        error instanceof DamagedDatabase ||
        (error as { code?: unknown }).code === "ERR_SQLITE_ERROR";
      throw new Error(
        `conversation store ${path}: ${(error as Error).message}${damaged ? DAMAGED_ADVICE : ""}`,
        { cause: error },
      );
    }
  }

  // Each call runs to its end before it returns (node:sqlite is synchronous): stores happen in
  // the order they are called, and no load sees half of one.

  async load(sessionId: string): Promise<SessionRecord<M> | undefined> {
    const row = this.sql.state.get(sessionId) as { state: string } | undefined;
    if (row === undefined) return undefined;
    const bodies = this.sql.messages.all(sessionId) as Array<{ body: string }>;
    return {
      ...JSON.parse(row.state),
      messages: bodies.map((message) => JSON.parse(message.body)),
    };
  }

  /** One transaction per stored turn: the new messages and the rest of the record, or nothing. */
  async save(record: SessionRecord<M>): Promise<void> {
    this.transaction(() => this.write(record));
  }

  async delete(sessionId: string): Promise<void> {
    this.sql.deleteSession.run(sessionId);
  }

  async list(): Promise<string[]> {
    return (this.sql.ids.all() as Array<{ session_id: string }>).map((row) => row.session_id);
  }

  /** Closes the database (idempotent); the store cannot be used after. */
  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  private write(record: SessionRecord<M>): void {
    const { messages, ...rest } = record;
    const texts = messages.map((message) => JSON.stringify(message));
    const head = this.sql.head.get(record.sessionId) as
      | { message_count: number; messages_digest: string }
      | undefined;
    const stored = head?.message_count ?? 0;
    const digest = digests(texts, stored);
    // A turn extends the stored conversation: only its messages are written. Anything else (an
    // engine that compacted or rewrote its history) replaces the conversation.
    const from = head !== undefined && digest.prefix === head.messages_digest ? stored : 0;
    if (from === 0) this.sql.deleteMessages.run(record.sessionId);
    this.sql.upsertSession.run(record.sessionId, JSON.stringify(rest), texts.length, digest.full);
    for (let seq = from; seq < texts.length; seq++) {
      this.sql.insertMessage.run(record.sessionId, seq, texts[seq] as string);
    }
  }

  /** `BEGIN IMMEDIATE`: the write lock up front, so a busy database waits instead of failing midway. */
  private transaction<T>(body: () => T): T {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const result = body();
      this.db.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      throw error;
    }
  }
}
