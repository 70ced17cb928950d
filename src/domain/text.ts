// UTF-8 byte measures and boundary-safe tails, plus a small content hash for envelope ids.
// Pure helpers; no cryptographic strength is claimed or needed (ids are scoped to one session).

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const utf8Bytes = (text: string): number => encoder.encode(text).byteLength;

/** The last `maxBytes` bytes of `text`, starting on a UTF-8 character boundary. */
export function utf8Tail(text: string, maxBytes: number): string {
  const bytes = encoder.encode(text);
  if (bytes.byteLength <= maxBytes) return text;
  let start = bytes.byteLength - Math.max(0, maxBytes);
  // Continuation bytes look like 0b10xxxxxx; skip them so no character is split.
  while (start < bytes.byteLength && ((bytes[start] ?? 0) & 0xc0) === 0x80) start += 1;
  return decoder.decode(bytes.subarray(start));
}

function cyrb53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** A 106-bit hex digest: two independently seeded 53-bit hashes. */
export function contentDigest(text: string): string {
  return (
    cyrb53(text, 1).toString(16).padStart(14, "0") + cyrb53(text, 2).toString(16).padStart(14, "0")
  );
}

/** Wire timestamps are ISO 8601 in UTC; the domain keeps epoch milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
