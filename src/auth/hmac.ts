// HMAC-SHA256 with WebCrypto, the runtime's own (node:crypto's `createHmac` builds a stream per
// call). Each key is imported once: the settings name a few secrets, fixed while the isolate lives.

/** How a secret's text becomes key bytes: as UTF-8 text, or as base64 (a Standard Webhooks secret). */
export type KeyText = "utf8" | "base64";

const keys = new Map<string, Promise<CryptoKey>>();
const encoder = new TextEncoder();

function keyOf(secret: string, text: KeyText): Promise<CryptoKey> {
  const name = `${text}:${secret}`;
  let key = keys.get(name);
  if (key === undefined) {
    const bytes = text === "utf8" ? encoder.encode(secret) : Buffer.from(secret, "base64");
    // WebCrypto refuses an empty key, which node:crypto signed with. HMAC pads a key with zero
    // bytes to its block, so one zero byte is the same key, and the signature stays the same.
    const raw = bytes.byteLength === 0 ? new Uint8Array(1) : bytes;
    key = crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(name, key);
  }
  return key;
}

/** The HMAC-SHA256 of `message` (UTF-8) under `secret`. */
export async function hmacSha256(
  secret: string,
  message: string,
  text: KeyText = "utf8",
): Promise<Uint8Array> {
  const mac = await crypto.subtle.sign("HMAC", await keyOf(secret, text), encoder.encode(message));
  return new Uint8Array(mac);
}
