// Inbox rules: admission with its backlog limit, claim leases, redelivery and idempotent ack.
// Deciding when an admission wakes the session is left to the wake rules.

import type { Decision } from "./decision";
import { decided } from "./decision";
import { CLAIM_ANSWER_MAX_BYTES } from "./limits";
import { type ProviderMessage, providerMessage } from "./messages";
import { copyOf, own } from "./records";
import type { Envelope, InboxItem, Session } from "./state";
import { iso, utf8Bytes } from "./text";

export const MAX_BACKLOG = 1024;

/** A claimed item whose lease ran out is claimable again, so it counts as pending. */
const isClaimable = (item: InboxItem, now: number): boolean =>
  item.state === "pending" ||
  (item.state === "claimed" && item.leaseExpiresAt !== null && item.leaseExpiresAt <= now);

/**
 * How many more items are claimable at `now` after a decision than before it. Exact because a
 * decision changes only inbox rows it was given (the shell persists the difference of those).
 */
export function claimableChange(before: Session | null, after: Session, now: number): number {
  let change = 0;
  for (const id of new Set([...Object.keys(before?.inbox ?? {}), ...Object.keys(after.inbox)])) {
    const was = before === null ? undefined : own(before.inbox, id);
    const is = own(after.inbox, id);
    change +=
      (is !== undefined && isClaimable(is, now) ? 1 : 0) -
      (was !== undefined && isClaimable(was, now) ? 1 : 0);
  }
  return change;
}

/** The inbox route's answer; the shell counts it in SQL (store.ts). */
export interface InboxCounts {
  readonly pending: number;
  readonly claimed: number;
  readonly acked: number;
  readonly generation: number;
}

export const hasBacklogRoom = (session: Session): boolean => session.unacked < MAX_BACKLOG;

export function admit(session: Session, envelope: Envelope): Session {
  const item: InboxItem = { envelope, state: "pending", leaseExpiresAt: null, ackedAt: null };
  return {
    ...session,
    generation: Math.max(session.generation, envelope.generation),
    unacked: session.unacked + 1,
    inbox: { ...session.inbox, [envelope.id]: item },
  };
}

export interface Claim {
  readonly envelope: Envelope;
  readonly provider_message: ProviderMessage;
  readonly lease_expires_at: string;
}

export function claim(
  session: Session,
  cmd: { max: number; leaseMs: number },
  now: number,
): Decision<{ claims: Claim[] }> {
  const candidates = Object.values(session.inbox)
    .filter((item) => isClaimable(item, now))
    .sort((a, b) => a.envelope.generation - b.envelope.generation)
    .slice(0, cmd.max);
  const leaseExpiresAt = now + cmd.leaseMs;
  const inbox = copyOf(session.inbox);
  const claims: Claim[] = [];
  let bytes = 0;
  for (const item of candidates) {
    const entry: Claim = {
      envelope: item.envelope,
      provider_message: providerMessage(item.envelope),
      lease_expires_at: iso(leaseExpiresAt),
    };
    bytes += utf8Bytes(JSON.stringify(entry));
    if (claims.length > 0 && bytes > CLAIM_ANSWER_MAX_BYTES) break;
    claims.push(entry);
    inbox[item.envelope.id] = { ...item, state: "claimed", leaseExpiresAt };
  }
  return decided(claims.length === 0 ? session : { ...session, inbox }, { claims });
}

export function ack(
  session: Session,
  ids: readonly string[],
  now: number,
): Decision<{ acked: string[]; unknown: string[] }> {
  const inbox = copyOf(session.inbox);
  const acked: string[] = [];
  const unknown: string[] = [];
  let newlyAcked = 0;
  for (const id of new Set(ids)) {
    const item = own(inbox, id);
    if (item === undefined) {
      unknown.push(id);
      continue;
    }
    acked.push(id);
    if (item.state !== "acked") {
      inbox[id] = { ...item, state: "acked", leaseExpiresAt: null, ackedAt: now };
      newlyAcked += 1;
    }
  }
  const next =
    newlyAcked === 0 ? session : { ...session, inbox, unacked: session.unacked - newlyAcked };
  return decided(next, { acked, unknown });
}
