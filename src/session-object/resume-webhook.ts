// The outbound resume webhook: Standard Webhooks signature and one bounded POST without redirects.
// Deciding when to deliver and what an outcome means is left to the domain delivery rules.
import { hmacSha256 } from "../auth/hmac";
import type { ResumePayload } from "../domain/decision";
import { DELIVERY_TIMEOUT_MS } from "../domain/delivery";

async function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<string> {
  const key = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  const signature = await hmacSha256(key, `${id}.${timestampSeconds}.${body}`, "base64");
  return `v1,${Buffer.from(signature).toString("base64")}`;
}

/** `status` is the host's HTTP status, null when none arrived (network error, timeout, no secret). */
type DeliveryOutcome =
  | { delivered: true; status: number }
  | { delivered: false; status: number | null; error: string };

/** The most of an answer's body read before it is cancelled: hosts answer with a few bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

const isTimeout = (error: unknown): boolean =>
  error instanceof Error && error.name === "TimeoutError";
const messageOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).slice(0, 200);

/**
 * Reads the answer to its end, within the request's timeout. A host whose connection breaks
 * before its body ends may have crashed while answering, so that answer does not count as
 * delivered; a body beyond the bound is cancelled and its status stands.
 */
async function readAnswer(body: ReadableStream<Uint8Array> | null): Promise<void> {
  if (body === null) return;
  const reader = body.getReader();
  for (let total = 0; ; ) {
    const chunk = await reader.read();
    if (chunk.done) return;
    total += chunk.value.byteLength;
    if (total > MAX_ANSWER_BYTES) {
      await reader.cancel();
      return;
    }
  }
}

export async function postResume(
  url: string,
  payload: ResumePayload,
  signingSecret: string | null,
  nowMs: number,
): Promise<DeliveryOutcome> {
  if (signingSecret === null)
    return { delivered: false, status: null, error: "RESUME_SIGNING_SECRET is not set" };
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(nowMs / 1000);
  let signature: string;
  try {
    signature = await signWebhook(signingSecret, payload.resume_id, timestamp, body);
  } catch (error) {
    // A key WebCrypto refuses is this delivery's error, kept with the resume, not a thrown alarm.
    return {
      delivered: false,
      status: null,
      error: `RESUME_SIGNING_SECRET cannot sign (${messageOf(error)})`,
    };
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      headers: {
        "content-type": "application/json",
        "webhook-id": payload.resume_id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signature,
      },
      body,
    });
  } catch (error) {
    if (isTimeout(error)) return { delivered: false, status: null, error: "timed out after 10 s" };
    // workerd words a refused connection "Network connection lost": say what is known instead.
    return {
      delivered: false,
      status: null,
      error: `agent host could not be reached (${messageOf(error)})`,
    };
  }
  const ok = response.status >= 200 && response.status < 300;
  try {
    await readAnswer(response.body);
  } catch (error) {
    const broken = isTimeout(error)
      ? "did not finish its body within 10 s"
      : `broke off its body (${messageOf(error)})`;
    return {
      delivered: false,
      status: response.status,
      error: `agent host answered ${response.status} but ${broken}`,
    };
  }
  return ok
    ? { delivered: true, status: response.status }
    : {
        delivered: false,
        status: response.status,
        error: `agent host answered ${response.status}`,
      };
}
