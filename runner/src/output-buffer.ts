// Keeps a process's output as a head and a tail with a marker for what was cut between them.
// Byte totals are exact; the cut itself is shared/output-budget.ts's. How much to keep is the caller's.

import { type RenderedOutput, renderHeadTail, type Utf8Decode } from "../../shared/output-budget";

const decodeBuffer: Utf8Decode = (bytes) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");

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

  /** The last `count` bytes kept (a heartbeat's progress), read from the end without a copy of all. */
  lastBytes(count: number): Buffer {
    const picked: Buffer[] = [];
    let need = count;
    for (const chunks of [this.tail, this.head]) {
      for (let i = chunks.length - 1; i >= 0 && need > 0; i -= 1) {
        const chunk = chunks[i] ?? Buffer.alloc(0);
        picked.unshift(chunk.subarray(Math.max(0, chunk.byteLength - need)));
        need -= Math.min(need, chunk.byteLength);
      }
    }
    return Buffer.concat(picked);
  }

  /** Renders head + marker + tail within `maxBytes` of kept output (marker not counted). */
  render(maxBytes = this.headLimit + this.tailLimit): RenderedOutput {
    const head = Buffer.concat(this.head);
    const tailAll = Buffer.concat(this.tail);
    const tail = tailAll.subarray(Math.max(0, tailAll.byteLength - this.tailLimit));
    return renderHeadTail(head, tail, this.total, maxBytes, decodeBuffer);
  }
}
