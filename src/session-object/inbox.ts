// The inbox: counts, claims and acks, as plain functions over the loop. Lease and ack rules
// are the domain's; the counts are SQL (store/inbox.ts).

import { fail, type Result } from "../domain/errors";
import { ackRule, type Claim, claimRule, type InboxCounts } from "../domain/inbox";
import type { SessionLoop } from "./loop";
import { countAcked, countPending } from "./store/inbox";

export function counts(loop: SessionLoop): Result<InboxCounts> {
  const core = loop.core;
  if (core === null) return fail("not_found", "no such session");
  return {
    ok: true,
    value: loop.store.read((sql) => {
      const pending = countPending(sql, Date.now());
      return {
        pending,
        claimed: core.unacked - pending,
        acked: countAcked(sql),
        generation: core.generation,
      };
    }),
  };
}

export const claim = (
  loop: SessionLoop,
  cmd: { max: number; leaseMs: number },
): Result<{ claims: Claim[] }> => loop.run(claimRule, cmd);

export const ack = (
  loop: SessionLoop,
  cmd: { ids: string[] },
): Result<{ acked: string[]; unknown: string[] }> => loop.run(ackRule, cmd);
