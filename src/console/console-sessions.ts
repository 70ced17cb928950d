// The console's server-side sessions and sign-in attempt counts, in the index's D1 database (the
// one store the Worker shares across sessions). When a session is live is the domain's rule.
import schemaSql from "../../migrations/0002_console_sessions.sql";
import {
  type AttemptWindow,
  type ConsoleSessionRow,
  SIGN_IN_WINDOW_MS,
  staleBefore,
} from "../domain/console-session";
import { statementsOf, withSchema } from "../session-index/index-store";

const STATEMENTS = statementsOf(schemaSql);
const encoder = new TextEncoder();

/** SHA-256 as hex: what the table keeps of a session id and of an operator token. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A new opaque session id: 256 random bits, base64url. */
export function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

export interface StoredSession extends ConsoleSessionRow {
  readonly operatorHash: string;
}

/** Stores a session for `sessionId`; idle sessions and past attempt windows are swept on the way. */
export async function createSession(
  db: D1Database,
  sessionId: string,
  operatorHash: string,
  now: number,
): Promise<void> {
  const idHash = await sha256Hex(sessionId);
  await withSchema(
    db,
    () =>
      db.batch([
        db.prepare("DELETE FROM console_sessions WHERE last_seen_at < ?1").bind(staleBefore(now)),
        db
          .prepare("DELETE FROM console_sign_in_attempts WHERE window_start < ?1")
          .bind(now - SIGN_IN_WINDOW_MS),
        db
          .prepare(
            `INSERT INTO console_sessions (id_hash, operator_hash, created_at, last_seen_at)
             VALUES (?1, ?2, ?3, ?3)`,
          )
          .bind(idHash, operatorHash, now),
      ]),
    STATEMENTS,
  );
}

export async function findSession(
  db: D1Database,
  sessionId: string,
): Promise<StoredSession | null> {
  const idHash = await sha256Hex(sessionId);
  const row = await withSchema(
    db,
    () =>
      db
        .prepare(
          `SELECT operator_hash, created_at, last_seen_at FROM console_sessions WHERE id_hash = ?1`,
        )
        .bind(idHash)
        .first<{ operator_hash: string; created_at: number; last_seen_at: number }>(),
    STATEMENTS,
  );
  return row === null
    ? null
    : { operatorHash: row.operator_hash, createdAt: row.created_at, lastSeenAt: row.last_seen_at };
}

export async function touchSession(db: D1Database, sessionId: string, now: number): Promise<void> {
  const idHash = await sha256Hex(sessionId);
  await withSchema(
    db,
    () =>
      db
        .prepare("UPDATE console_sessions SET last_seen_at = ?2 WHERE id_hash = ?1")
        .bind(idHash, now)
        .run(),
    STATEMENTS,
  );
}

export async function endSession(db: D1Database, sessionId: string): Promise<void> {
  const idHash = await sha256Hex(sessionId);
  await withSchema(
    db,
    () => db.prepare("DELETE FROM console_sessions WHERE id_hash = ?1").bind(idHash).run(),
    STATEMENTS,
  );
}

/**
 * Counts one sign-in attempt of `client` in one statement (parallel attempts each count), a
 * window that has passed starting again at `now`; returns the window with this attempt in it.
 */
export async function countAttempt(
  db: D1Database,
  client: string,
  now: number,
): Promise<AttemptWindow> {
  const row = await withSchema(
    db,
    () =>
      db
        .prepare(
          `INSERT INTO console_sign_in_attempts (client, window_start, attempts) VALUES (?1, ?2, 1)
           ON CONFLICT (client) DO UPDATE SET
             attempts = CASE WHEN ?2 - window_start >= ?3 THEN 1 ELSE attempts + 1 END,
             window_start = CASE WHEN ?2 - window_start >= ?3 THEN ?2 ELSE window_start END
           RETURNING window_start, attempts`,
        )
        .bind(client, now, SIGN_IN_WINDOW_MS)
        .first<{ window_start: number; attempts: number }>(),
    STATEMENTS,
  );
  return { windowStart: row?.window_start ?? now, attempts: row?.attempts ?? 1 };
}

/** A successful sign-in clears its client's count. */
export async function clearAttempts(db: D1Database, client: string): Promise<void> {
  await withSchema(
    db,
    () => db.prepare("DELETE FROM console_sign_in_attempts WHERE client = ?1").bind(client).run(),
    STATEMENTS,
  );
}

/**
 * A right token gives its attempt back to a count every client shares (the attempt was counted
 * before the token was checked); only within the window it was counted in.
 */
export async function giveBackAttempt(
  db: D1Database,
  client: string,
  windowStart: number,
): Promise<void> {
  await withSchema(
    db,
    () =>
      db
        .prepare(
          `UPDATE console_sign_in_attempts SET attempts = attempts - 1
           WHERE client = ?1 AND window_start = ?2 AND attempts > 0`,
        )
        .bind(client, windowStart)
        .run(),
    STATEMENTS,
  );
}
