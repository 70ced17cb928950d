// The outbound resume webhook: Standard Webhooks signature and one bounded POST without redirects.
// Deciding when to deliver and what an outcome means is left to the domain delivery rules.
import { createHmac } from "node:crypto";
import type { ResumePayload } from "../domain/decision";
import { DELIVERY_TIMEOUT_MS } from "../domain/delivery";

export function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = Buffer.from(
    secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret,
    "base64",
  );
  const signature = createHmac("sha256", key)
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest("base64");
  return `v1,${signature}`;
}

export type DeliveryOutcome = { delivered: true } | { delivered: false; error: string };

export async function postResume(
  url: string,
  payload: ResumePayload,
  signingSecret: string | null,
  nowMs: number,
): Promise<DeliveryOutcome> {
  if (signingSecret === null)
    return { delivered: false, error: "RESUME_SIGNING_SECRET is not set" };
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(nowMs / 1000);
  try {
    const response = await fetch(url, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      headers: {
        "content-type": "application/json",
        "webhook-id": payload.resume_id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signWebhook(signingSecret, payload.resume_id, timestamp, body),
      },
      body,
    });
    await response.body?.cancel();
    if (response.status >= 200 && response.status < 300) return { delivered: true };
    return { delivered: false, error: `agent host answered ${response.status}` };
  } catch (error) {
    if (error instanceof Error && error.name === "TimeoutError")
      return { delivered: false, error: "timed out after 10 s" };
    const message = error instanceof Error ? error.message : String(error);
    return { delivered: false, error: `network error: ${message.slice(0, 200)}` };
  }
}
