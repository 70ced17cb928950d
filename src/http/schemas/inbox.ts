// Zod schemas of the inbox answers (docs/api.md "Inbox"): counts, claims with envelope and
// provider message, acks. The domain builds these values; the route table documents them.
import { z } from "zod";

const count = z.int().min(0);
const INSTRUCTION = z.enum([
  "background_exec_completed",
  "background_exec_wait_expired",
  "background_exec_outcome_unknown",
]);

export const inboxCountsSchema = z.strictObject({
  pending: count,
  claimed: count,
  acked: count,
  generation: count,
});

const envelopeSchema = z
  .strictObject({
    id: z.string(),
    generation: count,
    kind: z.literal("runtime_instruction"),
    source: z.strictObject({ type: z.literal("runtime"), subsystem: z.literal("background_exec") }),
    body: z.strictObject({
      type: z.literal("runtime_instruction"),
      instruction: INSTRUCTION,
      data: z.record(z.string(), z.unknown()),
    }),
    created_at: z.string(),
    correlation_id: z.string(),
  })
  .meta({ id: "Envelope" });

const providerMessageSchema = z
  .strictObject({
    id: z.string(),
    role: z.literal("user"),
    content: z.string(),
    metadata: z.strictObject({
      hidden_from_ui: z.literal(true),
      runtime_kind: INSTRUCTION,
      session_message: z.strictObject({
        id: z.string(),
        generation: count,
        instruction: INSTRUCTION,
        correlation_id: z.string(),
      }),
    }),
  })
  .meta({ id: "ProviderMessage", description: "What the model sees (hidden from the UI)." });

const claimSchema = z
  .strictObject({
    envelope: envelopeSchema,
    provider_message: providerMessageSchema,
    lease_expires_at: z.string(),
  })
  .meta({ id: "Claim" });

export const claimsSchema = z.strictObject({ claims: z.array(claimSchema) });

export const ackedSchema = z.strictObject({
  acked: z.array(z.string()),
  unknown: z.array(z.string()),
});
