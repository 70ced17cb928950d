import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hmacSha256 } from "./hmac";

/** What node:crypto signs, the reference both the minting and the old webhook signing used. */
const nodeMac = (key: string | Buffer, message: string): string =>
  createHmac("sha256", key).update(message).digest("hex");

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

describe("WebCrypto's HMAC signs as node:crypto does", () => {
  const texts = [
    "plain-ascii-secret",
    "sécret-ü-漢字-😀",
    "x".repeat(200),
    "\uD800lone-high",
    "lone-low\uDC00",
    " spaces inside and around ",
  ];

  it("a UTF-8 secret, whatever its characters and length, gives node:crypto's bytes", async () => {
    for (const secret of texts) {
      for (const message of ["eib3.payload", "ü-😀-\uD800", ""]) {
        expect([secret, message, hex(await hmacSha256(secret, message))]).toEqual([
          secret,
          message,
          nodeMac(secret, message),
        ]);
      }
    }
  });

  it("a base64 secret, padded or not, with url-safe letters or spaces, gives node:crypto's bytes", async () => {
    const secrets = [
      "dGVzdC1yZXN1bWUtc2lnbmluZy1zZWNyZXQtMDEyMzQ1Njc4OQ==",
      "dGVzdC1yZXN1bWUtc2lnbmluZy1zZWNyZXQtMDEyMzQ1Njc4OQ",
      "ab-_cd+/",
      "dGVz dC1y",
      "not base64 at all!",
    ];
    for (const secret of secrets) {
      expect([secret, hex(await hmacSha256(secret, "m", "base64"))]).toEqual([
        secret,
        nodeMac(Buffer.from(secret, "base64"), "m"),
      ]);
    }
  });

  it("a secret with no key bytes (`whsec_` alone, or no base64 letter) signs as node:crypto does, not refused", async () => {
    // node:crypto signs with an empty key; WebCrypto refuses one, which failed every resume delivery.
    for (const secret of ["", "!!!", "="]) {
      expect([secret, hex(await hmacSha256(secret, "m", "base64"))]).toEqual([
        secret,
        nodeMac(Buffer.from("", "base64"), "m"),
      ]);
    }
  });
});
