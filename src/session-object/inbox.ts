// The inbox: counts, claims and acks, as plain functions over the kernel. Lease and ack rules
// are the domain's; the counts are SQL (store.ts).

import { fail, type Result } from "../domain/errors";
import { ackRule, type Claim, claimRule, type InboxCounts } from "../domain/inbox";
import type { Kernel } from "./kernel";
import * as store from "./store";
import { run } from "./timers";

export function counts(k: Kernel): Result<InboxCounts> {
  const core = k.core;
  if (core === null) return fail("not_found", "no such session");
  return {
    ok: true,
    value: k.read((sql) => {
      const pending = store.countPending(sql, Date.now());
      return {
        pending,
        claimed: core.unacked - pending,
        acked: store.countAcked(sql),
        generation: core.generation,
      };
    }),
  };
}

export const claim = (
  k: Kernel,
  cmd: { max: number; leaseMs: number },
): Result<{ claims: Claim[] }> => run(k, claimRule, cmd);

export const ack = (
  k: Kernel,
  cmd: { ids: string[] },
): Result<{ acked: string[]; unknown: string[] }> => run(k, ackRule, cmd);
