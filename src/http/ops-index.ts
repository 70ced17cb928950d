// GET /v1/ops/sessions (table: routes/ops.ts): the sessions that need attention, from the D1 index, with counts per status.
// OPERATOR_TOKENS is checked in app.ts; the entries are the session objects' (they stay the truth).
import type { OpenAPIHono } from "@hono/zod-openapi";
import { problem } from "../../shared/problem";
import type { AttentionStatus } from "../domain/attention-status";
import { attentionAt, type IndexEntry } from "../domain/index-entry";
import { iso, isoOrNull } from "../domain/text";
import {
  countEntries,
  cursorOf,
  decodeCursor,
  encodeCursor,
  type IndexedEntry,
  pageEntries,
  removeEntry,
} from "../session-index/index-store";
import { type AppEnv, tenantSessionStub } from "./context";
import * as routes from "./routes/ops";
import { answer, serve } from "./serve";

/** A resume whose next attempt is this far past due means its object's alarm, or an update, was lost. */
const STALE_ATTEMPT_MS = 60_000;
/** Rows of one page checked against their objects: bounds what one list call costs. */
const MAX_CHECKED_PER_PAGE = 25;

function listed(entry: IndexEntry, status: AttentionStatus, indexedAt: number) {
  const detail = entry.detail;
  const resume = detail?.resume ?? null;
  return {
    tenant: entry.tenant,
    id: entry.id,
    status,
    session_status: detail?.session_status ?? null,
    since: isoOrNull(entry.since),
    ceiling_at: isoOrNull(detail?.ceiling_at ?? null),
    overdue_at: isoOrNull(entry.overdueAt),
    waiting_for: [...(detail?.waiting_for ?? [])],
    resume:
      resume === null
        ? null
        : {
            resume_id: resume.resume_id,
            state: resume.state,
            attempts: resume.attempts,
            last_error: resume.last_error,
            next_attempt_at: isoOrNull(resume.next_attempt_at),
          },
    inbox_pending: detail?.inbox_pending ?? 0,
    indexed_at: iso(indexedAt),
  };
}

/**
 * A row the index may have got wrong: time passed a deadline its object should have acted on
 * (a ceiling, a claim timeout, a delivery attempt), so either the object's alarm is late or the
 * update it sent was lost.
 */
const looksStale = ({ entry }: IndexedEntry, now: number): boolean =>
  (entry.overdueAt !== null && entry.overdueAt <= now) ||
  (entry.detail?.resume?.next_attempt_at ?? Number.POSITIVE_INFINITY) <= now - STALE_ATTEMPT_MS;

export function opsIndexRoutes(app: OpenAPIHono<AppEnv>): void {
  serve(app, routes.opsListSessions, async (c) => {
    const query = c.req.valid("query");
    const cursor = query.cursor === undefined ? null : decodeCursor(query.cursor);
    if (query.cursor !== undefined && cursor === null) {
      return problem("invalid_request", "cursor: not a cursor this list returned", {
        errors: [{ path: "cursor", message: "not a cursor this list returned" }],
      });
    }
    const db = c.env.INDEX;
    if (db === undefined) return problem("internal", "the INDEX binding (D1) is not configured");
    const status = query.status ?? null;
    const tenant = query.tenant ?? null;
    const now = Date.now();
    const [rows, counts] = await Promise.all([
      pageEntries(db, { status, tenant, limit: query.limit, cursor, now }),
      countEntries(db, tenant, now),
    ]);

    // Repair on read: a stale-looking row is checked against its object, which answers with its
    // entry now and sends it to the index again; a row whose session is gone is deleted.
    const checked = new Map<IndexedEntry, IndexEntry | null>();
    await Promise.all(
      rows
        .filter((row) => looksStale(row, now))
        .slice(0, MAX_CHECKED_PER_PAGE)
        .map(async (row) => {
          const answer = await tenantSessionStub(
            c.env,
            row.entry.tenant,
            row.entry.id,
          ).indexEntry();
          if (answer.ok) {
            checked.set(row, answer.value);
            return;
          }
          checked.set(row, null);
          await removeEntry(db, row.entry.tenant, row.entry.id);
        }),
    );

    const sessions = rows.flatMap((row) => {
      const entry = checked.has(row) ? checked.get(row) : row.entry;
      if (entry === null || entry === undefined) return [];
      const listedAs = attentionAt(entry, now);
      if (listedAs === null || (status !== null && listedAs !== status)) return [];
      return [listed(entry, listedAs, checked.has(row) ? now : row.indexedAt)];
    });
    const last = rows.at(-1);
    const next =
      rows.length === query.limit && last !== undefined
        ? encodeCursor(cursorOf(status, last))
        : null;
    return answer(routes.opsListSessions, 200, { ok: true, value: { sessions, next, counts } });
  });
}
