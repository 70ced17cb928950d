// Zod schema of the resume webhook's body (docs/api.md "The resume webhook"): what the agent
// host receives, signed.
import { z } from "zod";
import { RESUME_REASON } from "./views";

export const resumePayloadSchema = z
  .strictObject({
    type: z.literal("session.resume"),
    tenant: z.string(),
    session_id: z.string(),
    lifetime: z.string(),
    resume_id: z.string().meta({ description: "Also the `webhook-id` header: de-duplicate on it" }),
    reason: RESUME_REASON,
    inbox: z.strictObject({ pending: z.int().min(0) }),
  })
  .meta({ id: "ResumePayload" });
