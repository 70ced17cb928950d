// The inbox table: the claimable items a claim loads, the items an ack names, the counts, and the
// writes that admit, claim and ack an envelope.

import { dict } from "../../domain/records";
import type { InboxItem } from "../../domain/state";
import { fitting, type Writers } from "./columns";

type InboxRow = {
  id: string;
  state: string;
  lease_expires_at: number | null;
  acked_at: number | null;
  envelope: string;
};

export const itemFromRow = (row: InboxRow): InboxItem => ({
  envelope: JSON.parse(row.envelope),
  state: row.state as InboxItem["state"],
  leaseExpiresAt: row.lease_expires_at,
  ackedAt: row.acked_at,
});

/** Every item of the session (tests only: a request never loads them all). */
export const allItems = (sql: SqlStorage): Iterable<InboxRow> =>
  sql.exec<InboxRow>("SELECT * FROM inbox");

/**
 * Unacked items are the NULL entries of `inbox_by_acked_at` (migration 11), in generation order: a
 * claimable query walks those (at most the backlog limit), never the acked items kept for their
 * retention. `acked_at` is set exactly when an item is acked: the ack is its only writer, every
 * version of it set the state with it, and a claim never touches it; so the counts read the
 * index alone.
 */
const CLAIMABLE =
  "acked_at IS NULL AND (state = 'pending' OR (state = 'claimed' AND lease_expires_at <= ?))";

/**
 * The first claimable items by generation, at most `limit` and, past the first, only while their
 * envelopes fit in `maxBytes`: a claim never loads envelopes it cannot send. Sizes are read in SQL
 * first, so no envelope becomes a string before it is chosen.
 */
export function loadClaimable(
  sql: SqlStorage,
  now: number,
  limit: number,
  maxBytes: number,
): Record<string, InboxItem> {
  const sizes = sql.exec<{ generation: number; bytes: number }>(
    `SELECT generation, octet_length(envelope) AS bytes FROM inbox WHERE ${CLAIMABLE}
     ORDER BY generation LIMIT ?`,
    now,
    limit,
  );
  const chosen = fitting(sizes, maxBytes).map((row) => row.generation);
  const items = dict<InboxItem>();
  for (const generation of chosen) {
    const row = sql
      .exec<InboxRow>(
        "SELECT id, state, lease_expires_at, acked_at, envelope FROM inbox WHERE generation = ?",
        generation,
      )
      .one();
    items[row.id] = itemFromRow(row);
  }
  return items;
}

/**
 * The items an ack names, without their envelopes: an ack never reads one, and 1,024 of them
 * would be 64 MiB. The stand-in envelope carries id and generation only; no write carries an
 * admitted envelope again (`mark_acked` names ids), so it cannot reach storage.
 */
export function loadForAck(sql: SqlStorage, ids: readonly string[]): Record<string, InboxItem> {
  const items = dict<InboxItem>();
  for (const id of new Set(ids)) {
    const row = sql
      .exec<Omit<InboxRow, "envelope"> & { generation: number }>(
        "SELECT id, generation, state, lease_expires_at, acked_at FROM inbox WHERE id = ?",
        id,
      )
      .toArray()[0];
    if (row === undefined) continue;
    items[id] = {
      envelope: { id: row.id, generation: row.generation } as InboxItem["envelope"],
      state: row.state as InboxItem["state"],
      leaseExpiresAt: row.lease_expires_at,
      ackedAt: row.acked_at,
    };
  }
  return items;
}

/** Claimable items at `now` (a lapsed lease counts as pending). */
export const countPending = (sql: SqlStorage, now: number): number =>
  sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM inbox WHERE ${CLAIMABLE}`, now).one().n;

export const countAcked = (sql: SqlStorage): number =>
  sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM inbox WHERE acked_at IS NOT NULL").one().n;

// Two statements where one served both: a claim that named `acked_at` (even to keep it NULL)
// would rewrite its index entry, a billed row; claimed items are never acked ones, so a claim
// leaves the column alone.
const CLAIM_ITEM = "UPDATE inbox SET state = 'claimed', lease_expires_at = ? WHERE id = ?";
const ACK_ITEM =
  "UPDATE inbox SET state = 'acked', lease_expires_at = NULL, acked_at = ? WHERE id = ?";

export const INBOX_WRITERS: Writers<"insert_envelope" | "mark_claimed" | "mark_acked"> = {
  insert_envelope: (sql, { item }) => {
    sql.exec(
      "INSERT INTO inbox (id, generation, state, lease_expires_at, acked_at, envelope) VALUES (?, ?, ?, ?, ?, ?)",
      item.envelope.id,
      item.envelope.generation,
      item.state,
      item.leaseExpiresAt,
      item.ackedAt,
      JSON.stringify(item.envelope),
    );
  },
  mark_claimed: (sql, write) => {
    for (const id of write.ids) sql.exec(CLAIM_ITEM, write.leaseExpiresAt, id);
  },
  mark_acked: (sql, write) => {
    for (const id of write.ids) sql.exec(ACK_ITEM, write.ackedAt, id);
  },
};
