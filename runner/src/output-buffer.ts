// Keeps a process's output as a head and a tail with a marker for what was cut between them.
// Cuts fall on UTF-8 character boundaries; byte totals are exact. How much to keep is the caller's.

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

interface RenderedOutput {
  readonly text: string;
  readonly truncated: boolean;
  readonly totalBytes: number;
  readonly droppedBytes: number;
}

export class OutputBuffer {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;

  constructor(
    private readonly headLimit: number,
    private readonly tailLimit: number,
  ) {}

  append(chunk: Buffer): void {
    this.total += chunk.byteLength;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(this.headLimit - this.headBytes, rest.byteLength);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.byteLength === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.byteLength;
    // Trim whole chunks first, then compact, so long outputs stay O(kept bytes).
    while (
      this.tail.length > 1 &&
      this.tailBytes - (this.tail[0]?.byteLength ?? 0) >= this.tailLimit
    ) {
      this.tailBytes -= this.tail.shift()?.byteLength ?? 0;
    }
  }

  get totalBytes(): number {
    return this.total;
  }

  /** Renders head + marker + tail within `maxBytes` of kept output (marker not counted). */
  render(maxBytes = this.headLimit + this.tailLimit): RenderedOutput {
    const head = Buffer.concat(this.head);
    const tailAll = Buffer.concat(this.tail);
    const tail = tailAll.subarray(Math.max(0, tailAll.byteLength - this.tailLimit));
    const kept = Buffer.concat([head, tail]);
    const contiguous = head.byteLength + tail.byteLength === this.total;
    if (contiguous && kept.byteLength <= maxBytes) {
      return {
        text: kept.toString("utf8"),
        truncated: false,
        totalBytes: this.total,
        droppedBytes: 0,
      };
    }
    // Head and tail are cut separately: between them the stream is not contiguous.
    const headEnd = boundaryBefore(head, Math.floor(maxBytes / 2));
    const tailBudget = maxBytes - headEnd;
    const tailStart = contiguous
      ? boundaryAfter(kept, Math.max(headEnd, kept.byteLength - tailBudget))
      : head.byteLength + boundaryAfter(tail, Math.max(0, tail.byteLength - tailBudget));
    const dropped = this.total - headEnd - (kept.byteLength - tailStart);
    const text =
      kept.subarray(0, headEnd).toString("utf8") +
      MARKER(dropped) +
      kept.subarray(tailStart).toString("utf8");
    return { text, truncated: true, totalBytes: this.total, droppedBytes: dropped };
  }
}

/** `text` cut as a pull is cut: head and tail within `maxBytes`, the middle marked. */
export function capText(text: string, maxBytes: number): RenderedOutput {
  const buffer = new OutputBuffer(maxBytes, maxBytes);
  buffer.append(Buffer.from(text, "utf8"));
  return buffer.render(maxBytes);
}
