// Callback tokens: HMAC capabilities bound to one (session id, lifetime, handle, reservation seq),
// checked without storage.
// Which tokens a job hands out again is left to the session object; the lifetime check to the domain.
import { createHmac, timingSafeEqual } from "node:crypto";

/** eib2 binds the reservation's seq; eib1 tokens (before seq existed) still verify, seq null. */
const PREFIX = "eib2";
const LEGACY_PREFIX = "eib1";

export interface CallbackClaims {
  readonly sessionId: string;
  readonly lifetime: string;
  readonly handle: string;
  /** The reservation this token was minted for; null for a legacy eib1 token. */
  readonly seq: number | null;
}

const sign = (secret: string, signed: string): Buffer =>
  createHmac("sha256", secret).update(signed).digest();

export function mintCallbackToken(secret: string, claims: CallbackClaims): string {
  // A null seq mints the legacy shape; only tests of the upgrade path need that.
  const legacy = claims.seq === null;
  const fields = [claims.sessionId, claims.lifetime, claims.handle];
  const payload = Buffer.from(JSON.stringify(legacy ? fields : [...fields, claims.seq])).toString(
    "base64url",
  );
  const signed = `${legacy ? LEGACY_PREFIX : PREFIX}.${payload}`;
  return `${signed}.${sign(secret, signed).toString("base64url")}`;
}

/** Returns the claims when any listed secret signed the token (rotation: all verify). */
export function verifyCallbackToken(
  token: string,
  secrets: readonly string[],
): CallbackClaims | null {
  const parts = token.split(".");
  if (parts.length !== 3 || (parts[0] !== PREFIX && parts[0] !== LEGACY_PREFIX)) return null;
  const [prefix, payload, signature] = parts as [string, string, string];
  const given = Buffer.from(signature, "base64url");
  let valid = false;
  for (const secret of secrets) {
    const expected = sign(secret, `${prefix}.${payload}`);
    // Every secret is checked, match or not, so timing does not tell which one signed.
    if (given.length === expected.length && timingSafeEqual(given, expected)) valid = true;
  }
  if (!valid) return null;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    if (!Array.isArray(decoded) || !decoded.slice(0, 3).every((part) => typeof part === "string"))
      return null;
    const [sessionId, lifetime, handle, seq] = decoded as [string, string, string, unknown];
    if (prefix === LEGACY_PREFIX)
      return decoded.length === 3 ? { sessionId, lifetime, handle, seq: null } : null;
    if (decoded.length !== 4 || !Number.isSafeInteger(seq) || (seq as number) < 1) return null;
    return { sessionId, lifetime, handle, seq: seq as number };
  } catch {
    return null;
  }
}

/**
 * The token to hand out for a reservation: the stored one while a listed secret still verifies it
 * (so a repeated reservation gets the identical token), else a fresh one from the first secret.
 */
export function tokenForReservation(
  stored: string | undefined,
  secrets: readonly string[],
  claims: CallbackClaims,
): string {
  if (stored !== undefined && verifyCallbackToken(stored, secrets) !== null) return stored;
  const signer = secrets[0];
  if (signer === undefined) throw new Error("CALLBACK_SECRETS is not set");
  return mintCallbackToken(signer, claims);
}
