// Reaching into the real object's storage for a lockstep run: running code on its instance, and
// ageing its rows as if its clock had moved. When to do either is left to the Lockstep.
import { runInDurableObject } from "cloudflare:test";
import type { SessionObject } from "../../src/session-object/session-object";

/** Runs `callback` inside the session's object, on its instance (what `runInDurableObject` does). */
export function inObject<R>(
  stub: DurableObjectStub<SessionObject>,
  callback: (object: SessionObject, state: DurableObjectState) => R | Promise<R>,
): Promise<R> {
  return runInDurableObject(stub, (instance, state) => callback(instance, state));
}

/** Every stored time of the session, `ms` earlier: the same as its clock moving `ms` ahead. */
export function shiftTimes(sql: SqlStorage, ms: number): void {
  const shift = (column: string) => `${column} = ${column} - ${ms}`;
  // Only the times a JSON column holds move: a field its state does not have stays absent.
  const shiftJson = (text: string | null, fields: string[]): string | null => {
    if (text === null) return null;
    const value = JSON.parse(text) as Record<string, unknown>;
    for (const field of fields) {
      const time = value[field];
      if (typeof time === "number") value[field] = time - ms;
    }
    return JSON.stringify(value);
  };
  sql.exec(`UPDATE jobs SET ${shift("reserved_at")}, ${shift("completed_at")}`);
  sql.exec(`UPDATE inbox SET ${shift("lease_expires_at")}, ${shift("acked_at")}`);
  sql.exec(`UPDATE purged SET ${shift("purged_at")}`);
  sql.exec(`UPDATE messages SET ${shift("created_at")}`);
  const row = sql
    .exec<{ run: string | null; wait: string | null; resume: string | null }>(
      "SELECT run, wait, resume FROM session",
    )
    .toArray()[0];
  if (row === undefined) return;
  sql.exec(
    `UPDATE session SET ${shift("created_at")}, run = ?, wait = ?, resume = ?`,
    shiftJson(row.run, ["registeredAt"]),
    shiftJson(row.wait, ["since", "ceilingAt"]),
    shiftJson(row.resume, [
      "createdAt",
      "nextAttemptAt",
      "lastAttemptAt",
      "deliveredAt",
      "endedAt",
    ]),
  );
}
