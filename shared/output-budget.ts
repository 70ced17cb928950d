// How much of a command's output one answer keeps, and how it is cut: head and tail on UTF-8
// character boundaries with a marker for the middle. Holding the bytes (the runner's buffers) is left to callers.

const BYTES_PER_TOKEN = 4;
const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;

/** The bytes of output one answer keeps for `max_output_tokens` (Codex's shape: 4 bytes a token). */
export const outputBudget = (maxOutputTokens: number | undefined): number =>
  Math.max(256, (maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS) * BYTES_PER_TOKEN);

const MARKER = (dropped: number) => `\n…[${dropped} bytes omitted]…\n`;

const isContinuation = (byte: number | undefined): boolean => ((byte ?? 0) & 0xc0) === 0x80;

function sequenceLength(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

/** The longest prefix of `bytes`, at most `limit` long, that ends on a whole character. */
function boundaryBefore(bytes: Uint8Array, limit: number): number {
  let cut = Math.min(limit, bytes.byteLength);
  if (cut < bytes.byteLength) {
    while (cut > 0 && isContinuation(bytes[cut])) cut -= 1;
    return cut;
  }
  let lead = cut - 1;
  while (lead > 0 && isContinuation(bytes[lead])) lead -= 1;
  if (lead >= 0 && lead + sequenceLength(bytes[lead] ?? 0) > cut) cut = lead;
  return cut;
}

/** Index of the first UTF-8 boundary at or after `start` in `bytes`. */
function boundaryAfter(bytes: Uint8Array, start: number): number {
  let cut = Math.max(0, start);
  while (cut < bytes.byteLength && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut += 1;
  return cut;
}

export interface RenderedOutput {
  readonly text: string;
  readonly truncated: boolean;
  readonly totalBytes: number;
  readonly droppedBytes: number;
}

/** Turns UTF-8 bytes into text (the runner decodes with Node's Buffer, others with TextDecoder). */
export type Utf8Decode = (bytes: Uint8Array) => string;

// Keeps a leading BOM, as Buffer's "utf8" decoding does, so both decoders give the same text.
const textDecoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const decodeUtf8: Utf8Decode = (bytes) => textDecoder.decode(bytes);

/**
 * Renders a kept head and tail (the tail already trimmed to its limit) of a stream of `total`
 * bytes within `maxBytes` of kept output (marker not counted).
 */
export function renderHeadTail(
  head: Uint8Array,
  tail: Uint8Array,
  total: number,
  maxBytes: number,
  decode: Utf8Decode = decodeUtf8,
): RenderedOutput {
  const kept = new Uint8Array(head.byteLength + tail.byteLength);
  kept.set(head, 0);
  kept.set(tail, head.byteLength);
  const contiguous = kept.byteLength === total;
  if (contiguous && kept.byteLength <= maxBytes) {
    return { text: decode(kept), truncated: false, totalBytes: total, droppedBytes: 0 };
  }
  // Head and tail are cut separately: between them the stream is not contiguous.
  const headEnd = boundaryBefore(head, Math.floor(maxBytes / 2));
  const tailBudget = maxBytes - headEnd;
  const tailStart = contiguous
    ? boundaryAfter(kept, Math.max(headEnd, kept.byteLength - tailBudget))
    : head.byteLength + boundaryAfter(tail, Math.max(0, tail.byteLength - tailBudget));
  const dropped = total - headEnd - (kept.byteLength - tailStart);
  const text =
    decode(kept.subarray(0, headEnd)) + MARKER(dropped) + decode(kept.subarray(tailStart));
  return { text, truncated: true, totalBytes: total, droppedBytes: dropped };
}

/** `text` cut as a pull is cut: head and tail within `maxBytes`, the middle marked. */
export function capText(text: string, maxBytes: number): RenderedOutput {
  const bytes = new TextEncoder().encode(text);
  const headEnd = Math.min(maxBytes, bytes.byteLength);
  const rest = bytes.subarray(headEnd);
  const tail = rest.subarray(Math.max(0, rest.byteLength - maxBytes));
  return renderHeadTail(bytes.subarray(0, headEnd), tail, bytes.byteLength, maxBytes);
}

/** How much of `bytes` ends on a whole UTF-8 character: a character cut at the end is left out. */
export const utf8WholeLength = (bytes: Uint8Array): number =>
  boundaryBefore(bytes, bytes.byteLength);

/** The last at most `maxBytes` of `bytes`, starting and ending on whole UTF-8 characters. */
export function utf8Tail(bytes: Uint8Array, maxBytes: number): Uint8Array {
  const start = boundaryAfter(bytes, bytes.byteLength - maxBytes);
  // A character the command has only half written yet is left for the next heartbeat.
  const end = boundaryBefore(bytes, bytes.byteLength);
  return bytes.subarray(start, Math.max(start, end));
}
