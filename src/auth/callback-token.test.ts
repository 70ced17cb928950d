import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkCallbackToken, mintCallbackToken, verifyCallbackToken } from "./callback-token";

const SECRETS = ["secret-new", "secret-old"];
const CLAIMS = { tenant: "acme", sessionId: "s1", lifetime: "lt_1", handle: "h1", seq: 3 };
const token = mintCallbackToken("secret-new", CLAIMS);
const [prefix, payload, signature] = token.split(".") as [string, string, string];

/** Flips the unused low bits of the last base64url character: same bytes, other spelling. */
function lowBitTwin(text: string): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const last = alphabet.indexOf(text.at(-1) ?? "");
  return `${text.slice(0, -1)}${alphabet[last ^ 1]}`;
}

/** Both checks, as one async function: the reservation's (node:crypto) and the request's (WebCrypto). */
const CHECKS = [
  [
    "node:crypto",
    async (token: string, secrets: readonly string[]) => verifyCallbackToken(token, secrets),
  ],
  ["WebCrypto", checkCallbackToken],
] as const;

describe.each(CHECKS)("callback tokens, checked with %s", (_name, check) => {
  it("a minted token verifies with every listed secret and carries its tenant", async () => {
    expect(await check(token, SECRETS)).toEqual(CLAIMS);
    expect(await check(mintCallbackToken("secret-old", CLAIMS), SECRETS)).toEqual(CLAIMS);
    expect(await check(token, ["another-secret"])).toBeNull();
  });

  it("the same signature in another spelling is refused", async () => {
    const spellings = {
      padded: `${prefix}.${payload}.${signature}=`,
      standardAlphabet: `${prefix}.${payload}.${Buffer.from(signature, "base64url").toString("base64")}`,
      lowBit: `${prefix}.${payload}.${lowBitTwin(signature)}`,
      nonAscii: `${token}é`,
      trailingDot: `${token}.`,
      whitespace: `${token} `,
    };
    // Each spelling decodes to the same signature bytes (or a prefix of them): that was the hole.
    expect(Buffer.from(lowBitTwin(signature), "base64url")).toEqual(
      Buffer.from(signature, "base64url"),
    );
    for (const [name, spelled] of Object.entries(spellings)) {
      expect([name, await check(spelled, SECRETS)]).toEqual([name, null]);
    }
  });

  it("a payload in another spelling is refused, even when signed", async () => {
    // Only a holder of the secret could sign it; still, one token has one spelling.
    const respelled = `${prefix}.${payload}=`;
    const signed = createHmac("sha256", "secret-new").update(respelled).digest("base64url");
    expect(await check(`${respelled}.${signed}`, SECRETS)).toBeNull();
  });

  it("tokens minted before tenants existed verify as the default tenant's", async () => {
    const eib2Payload = Buffer.from(JSON.stringify(["s1", "lt_1", "h1", 2])).toString("base64url");
    const signedPart = `eib2.${eib2Payload}`;
    const eib2 = `${signedPart}.${createHmac("sha256", "secret-old").update(signedPart).digest("base64url")}`;
    expect(await check(eib2, SECRETS)).toEqual({
      tenant: "default",
      sessionId: "s1",
      lifetime: "lt_1",
      handle: "h1",
      seq: 2,
    });
    const eib1 = mintCallbackToken("secret-old", { ...CLAIMS, seq: null });
    expect(await check(eib1, SECRETS)).toMatchObject({ tenant: "default", seq: null });
  });

  it("a prefix with the wrong number of fields is refused", async () => {
    const fields = Buffer.from(JSON.stringify(["s1", "lt_1", "h1", 2, "acme"])).toString(
      "base64url",
    );
    const signedPart = `eib2.${fields}`;
    const mislabelled = `${signedPart}.${createHmac("sha256", "secret-new").update(signedPart).digest("base64url")}`;
    expect(await check(mislabelled, SECRETS)).toBeNull();
  });
});
