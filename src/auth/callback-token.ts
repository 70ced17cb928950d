// Callback tokens: HMAC capabilities bound to one (tenant, session id, lifetime, handle,
// reservation seq), checked without storage, in exactly one accepted spelling.
// Which tokens a job hands out again is left to the session object; the lifetime check to the domain.
import { createHmac, timingSafeEqual } from "node:crypto";
import { DEFAULT_TENANT } from "../domain/tenants";
import { hmacSha256 } from "./hmac";

/**
 * eib3 binds the tenant; eib2 (the reservation seq) and eib1 (neither) were minted before those
 * existed, by a deployment that had only the default tenant, and still verify as such.
 */
const PREFIX = "eib3";
const FIELDS: Readonly<Record<string, number>> = { eib1: 3, eib2: 4, eib3: 5 };

export interface CallbackClaims {
  readonly tenant: string;
  readonly sessionId: string;
  readonly lifetime: string;
  readonly handle: string;
  /** The reservation this token was minted for; null for a legacy eib1 token. */
  readonly seq: number | null;
}

const sign = (secret: string, signed: string): string =>
  createHmac("sha256", secret).update(signed).digest("base64url");

const encode = (fields: readonly unknown[]): string =>
  Buffer.from(JSON.stringify(fields)).toString("base64url");

export function mintCallbackToken(secret: string, claims: CallbackClaims): string {
  // A null seq mints the legacy eib1 shape; only tests of the upgrade path need it.
  const fields = [claims.sessionId, claims.lifetime, claims.handle];
  const signed =
    claims.seq === null
      ? `eib1.${encode(fields)}`
      : `${PREFIX}.${encode([...fields, claims.seq, claims.tenant])}`;
  return `${signed}.${sign(secret, signed)}`;
}

/** Equal strings compared in constant time; a length difference tells nothing secret. */
const sameText = (a: string, b: string): boolean => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

function claimsOf(prefix: string, payload: string): CallbackClaims | null {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  // One spelling: the payload must be exactly what minting would have written.
  if (!Array.isArray(decoded) || encode(decoded) !== payload) return null;
  if (decoded.length !== FIELDS[prefix]) return null;
  const [sessionId, lifetime, handle, seq, tenant = DEFAULT_TENANT] = decoded as unknown[];
  if (![sessionId, lifetime, handle, tenant].every((part) => typeof part === "string")) return null;
  if (prefix !== "eib1" && (!Number.isSafeInteger(seq) || (seq as number) < 1)) return null;
  return {
    tenant: tenant as string,
    sessionId: sessionId as string,
    lifetime: lifetime as string,
    handle: handle as string,
    seq: prefix === "eib1" ? null : (seq as number),
  };
}

/** The token's three parts, when it has exactly three and a known prefix. */
function partsOf(token: string): { prefix: string; payload: string; signature: string } | null {
  const parts = token.split(".");
  const [prefix = "", payload = "", signature = ""] = parts;
  return parts.length === 3 && FIELDS[prefix] !== undefined ? { prefix, payload, signature } : null;
}

/**
 * Returns the claims when any listed secret signed the token (rotation: all verify). The signature
 * is compared as text with the one minting writes, so padding, the standard alphabet, spare low
 * bits or trailing bytes all fail: a token has exactly one accepted spelling.
 */
export function verifyCallbackToken(
  token: string,
  secrets: readonly string[],
): CallbackClaims | null {
  const parts = partsOf(token);
  if (parts === null) return null;
  const signed = `${parts.prefix}.${parts.payload}`;
  // Every secret is checked, match or not, so timing does not tell which one signed.
  const matches = secrets.map((secret) => sameText(parts.signature, sign(secret, signed)));
  return matches.includes(true) ? claimsOf(parts.prefix, parts.payload) : null;
}

/**
 * `verifyCallbackToken` for the request path, the same check with WebCrypto's HMAC: the runtime's
 * own, where node:crypto's `createHmac` builds a stream per call.
 */
export async function checkCallbackToken(
  token: string,
  secrets: readonly string[],
): Promise<CallbackClaims | null> {
  const parts = partsOf(token);
  if (parts === null) return null;
  const signed = `${parts.prefix}.${parts.payload}`;
  const signatures = await Promise.all(
    secrets.map(async (secret) =>
      Buffer.from(await hmacSha256(secret, signed)).toString("base64url"),
    ),
  );
  const matches = signatures.map((expected) => sameText(parts.signature, expected));
  return matches.includes(true) ? claimsOf(parts.prefix, parts.payload) : null;
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
