// The messages table: pages of the conversation, and the write that appends a message.

import type { Message } from "../../domain/state";
import { fitting, type Writers } from "./columns";

type MessageRow = {
  idx: number;
  role: string;
  content: string;
  metadata: string;
  created_at: number;
};

const messageFromRow = (row: MessageRow): Message => ({
  index: row.idx,
  role: row.role as Message["role"],
  content: JSON.parse(row.content),
  metadata: JSON.parse(row.metadata),
  createdAt: row.created_at,
});

/** Every message of the session (tests only: a request reads pages). */
export const allMessages = (sql: SqlStorage): Message[] =>
  sql.exec<MessageRow>("SELECT * FROM messages ORDER BY idx").toArray().map(messageFromRow);

export function listMessages(
  sql: SqlStorage,
  query: { after: number; before: number | null; limit: number; maxBytes: number },
): { messages: Message[]; nextAfter: number | null } {
  const before = query.before ?? Number.MAX_SAFE_INTEGER;
  // Content and metadata are stored as JSON: their bytes are what the answer carries.
  const sizes = sql.exec<{ idx: number; bytes: number }>(
    `SELECT idx, 96 + octet_length(content) + octet_length(metadata) AS bytes
     FROM messages WHERE idx > ? AND idx < ? ORDER BY idx LIMIT ?`,
    query.after,
    before,
    query.limit,
  );
  const page = fitting(sizes, query.maxBytes);
  const last = page.at(-1);
  if (last === undefined) return { messages: [], nextAfter: null };
  const messages = sql
    .exec<MessageRow>(
      "SELECT * FROM messages WHERE idx > ? AND idx <= ? ORDER BY idx",
      query.after,
      last.idx,
    )
    .toArray()
    .map(messageFromRow);
  const more =
    sql.exec("SELECT 1 FROM messages WHERE idx > ? AND idx < ? LIMIT 1", last.idx, before).toArray()
      .length > 0;
  return { messages, nextAfter: more ? last.idx : null };
}

export const MESSAGE_WRITERS: Writers<"insert_message"> = {
  insert_message: (sql, { message }) => {
    sql.exec(
      "INSERT INTO messages (idx, role, content, metadata, created_at) VALUES (?, ?, ?, ?, ?)",
      message.index,
      message.role,
      JSON.stringify(message.content),
      JSON.stringify(message.metadata),
      message.createdAt,
    );
  },
};
