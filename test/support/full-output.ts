// What the pool's full-output tests share: deterministic part bytes, their SHA-256, and a part upload
// as a runner sends it (callback token, the hash in `x-content-sha256`).
import * as api from "./api";

const hex = (buffer: ArrayBuffer) =>
  [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, "0")).join("");

export const sha256 = async (bytes: Uint8Array) =>
  hex(await crypto.subtle.digest("SHA-256", bytes));

/** Deterministic bytes: part `seed` of a test's output. */
export function bytesOf(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let state = seed * 2654435761 + 1;
  for (let i = 0; i < length; i += 1) {
    state = (state * 1103515245 + 12345) >>> 0;
    out[i] = state >>> 24;
  }
  return out;
}

export const partPath = (sid: string, handle: string, index: number) =>
  `/v1/sessions/${sid}/exec-jobs/${handle}/output/parts/${index}`;

/** PUT one part; `sha` overrides the hash sent (a test of a mismatch). */
export const upload = async (
  sid: string,
  handle: string,
  token: string,
  index: number,
  bytes: Uint8Array,
  sha?: string,
) =>
  api.call("PUT", partPath(sid, handle, index), {
    token,
    raw: bytes,
    headers: {
      "content-type": "application/octet-stream",
      "x-content-sha256": sha ?? (await sha256(bytes)),
    },
  });
