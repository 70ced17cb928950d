// What the table files share: JSON columns read back as domain shapes, and pages bounded by
// bytes. The tables themselves are each in their own file.

import type { Write } from "../../domain/decision";

/** A JSON column holds a domain shape as it is; new fields of such a shape must stay optional. */
export const parseOrNull = <T>(text: string | null): T | null =>
  text === null ? null : (JSON.parse(text) as T);

/** The leading rows whose `bytes` add up to at most `maxBytes`, and always the first one. */
export function fitting<Row extends { bytes: number }>(
  rows: Iterable<Row>,
  maxBytes: number,
): Row[] {
  const kept: Row[] = [];
  let total = 0;
  for (const row of rows) {
    total += row.bytes;
    if (kept.length > 0 && total > maxBytes) break;
    kept.push(row);
  }
  return kept;
}

/** How a table file stores the writes it owns: one function per write type, none missing. */
export type Writers<K extends Write["type"]> = {
  readonly [T in K]: (sql: SqlStorage, write: Extract<Write, { type: T }>) => void;
};
