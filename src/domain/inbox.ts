// Inbox rules: admission with its backlog limit, claim leases, redelivery and idempotent ack.
// Deciding when an admission wakes the session is left to the wake rules.

import { idsEvent } from "./audit";
import type { Decision, Rule, Write } from "./decision";
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
 * How many more items are claimable at `now` after a decision's writes than before them. Exact
 * because a decision writes only inbox rows it was given or creates.
 */
export function claimableChange(
  before: Session | null,
  writes: readonly Write[],
  now: number,
): number {
  const was = (id: string): number => {
    const item = before === null ? undefined : own(before.inbox, id);
    return item !== undefined && isClaimable(item, now) ? 1 : 0;
  };
  let change = 0;
  for (const write of writes) {
    switch (write.type) {
      case "insert_envelope":
        change += isClaimable(write.item, now) ? 1 : 0;
        break;
      case "mark_claimed":
        for (const id of write.ids) change += (write.leaseExpiresAt <= now ? 1 : 0) - was(id);
        break;
      case "mark_acked":
        for (const id of write.ids) change -= was(id);
        break;
      default:
        break;
    }
  }
  return change;
}

/** The inbox route's answer; the shell counts it in SQL (store/inbox.ts). */
export interface InboxCounts {
  readonly pending: number;
  readonly claimed: number;
  readonly acked: number;
  readonly generation: number;
}

export const hasBacklogRoom = (session: Session): boolean => session.unacked < MAX_BACKLOG;

export function admit(session: Session, envelope: Envelope): { session: Session; write: Write } {
  const item: InboxItem = { envelope, state: "pending", leaseExpiresAt: null, ackedAt: null };
  return {
    session: {
      ...session,
      generation: Math.max(session.generation, envelope.generation),
      unacked: session.unacked + 1,
      inbox: { ...session.inbox, [envelope.id]: item },
    },
    write: { type: "insert_envelope", item },
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
  if (claims.length === 0) return decided(session, { claims });
  const ids = claims.map((entry) => entry.envelope.id);
  return decided(
    { ...session, inbox },
    { claims },
    [],
    [{ type: "mark_claimed", ids, leaseExpiresAt }],
  );
}

type ClaimCmd = { max: number; leaseMs: number };

export const claimRule: Rule<ClaimCmd, { claims: Claim[] }> = {
  needs: (_, cmd) => ({ claimable: { max: cmd.max, maxBytes: CLAIM_ANSWER_MAX_BYTES } }),
  decide: ({ session }, cmd, ctx) => claim(session, cmd, ctx.now),
  events: (_, value) =>
    value.claims.length === 0
      ? []
      : [
          idsEvent(
            "claim",
            value.claims.map((item) => item.envelope.id),
          ),
        ],
};

export function ack(
  session: Session,
  ids: readonly string[],
  now: number,
): Decision<{ acked: string[]; unknown: string[] }> {
  const inbox = copyOf(session.inbox);
  const acked: string[] = [];
  const unknown: string[] = [];
  const newlyAcked: string[] = [];
  for (const id of new Set(ids)) {
    const item = own(session.inbox, id);
    if (item === undefined) {
      unknown.push(id);
      continue;
    }
    acked.push(id);
    if (item.state !== "acked") {
      inbox[id] = { ...item, state: "acked", leaseExpiresAt: null, ackedAt: now };
      newlyAcked.push(id);
    }
  }
  if (newlyAcked.length === 0) return decided(session, { acked, unknown });
  return decided(
    { ...session, inbox, unacked: session.unacked - newlyAcked.length },
    { acked, unknown },
    [],
    [{ type: "mark_acked", ids: newlyAcked, ackedAt: now }],
  );
}

export const ackRule: Rule<{ ids: string[] }, { acked: string[]; unknown: string[] }> = {
  needs: (_, cmd) => ({ items: cmd.ids }),
  decide: ({ session }, cmd, ctx) => ack(session, cmd.ids, ctx.now),
  events: (_, value) => (value.acked.length === 0 ? [] : [idsEvent("ack", value.acked)]),
};
