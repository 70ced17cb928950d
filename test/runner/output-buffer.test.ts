import { describe, expect, it } from "vitest";
import { OutputBuffer } from "../../runner/src/output-buffer";

const isValidUtf8 = (text: string) => !text.includes("\uFFFD");

describe("runner output buffer", () => {
  it("keeps short output whole", () => {
    const buffer = new OutputBuffer(16, 16);
    buffer.append(Buffer.from("hello "));
    buffer.append(Buffer.from("world"));
    expect(buffer.render()).toEqual({
      text: "hello world",
      truncated: false,
      totalBytes: 11,
      droppedBytes: 0,
    });
  });

  it("keeps head and tail with a marker that says how much was cut", () => {
    const buffer = new OutputBuffer(10, 10);
    buffer.append(Buffer.from(`HEAD-${"x".repeat(1000)}-TAIL`));
    const rendered = buffer.render();
    expect(rendered.truncated).toBe(true);
    expect(rendered.totalBytes).toBe(1010);
    expect(rendered.text.startsWith("HEAD-")).toBe(true);
    expect(rendered.text.endsWith("-TAIL")).toBe(true);
    expect(rendered.text).toContain(`[${rendered.droppedBytes} bytes omitted]`);
    expect(rendered.droppedBytes).toBe(990);
  });

  it("never cuts inside a UTF-8 character, whatever the chunking", () => {
    const text = "é😀ü".repeat(400);
    for (const chunkSize of [1, 2, 3, 5, 7]) {
      for (const limit of [9, 10, 11, 13]) {
        const buffer = new OutputBuffer(limit, limit);
        const bytes = Buffer.from(text);
        for (let i = 0; i < bytes.byteLength; i += chunkSize)
          buffer.append(bytes.subarray(i, i + chunkSize));
        const rendered = buffer.render();
        expect(isValidUtf8(rendered.text)).toBe(true);
        expect(rendered.totalBytes).toBe(bytes.byteLength);
        const [head, tail] = rendered.text.split(/\n…\[\d+ bytes omitted\]…\n/);
        expect(Buffer.byteLength(head!) + Buffer.byteLength(tail!) + rendered.droppedBytes).toBe(
          bytes.byteLength,
        );
      }
    }
  });

  it("renders within a smaller budget than it keeps", () => {
    const buffer = new OutputBuffer(1000, 1000);
    buffer.append(Buffer.from("a".repeat(1500)));
    const rendered = buffer.render(100);
    expect(rendered.truncated).toBe(true);
    expect(rendered.droppedBytes).toBe(1400);
  });
});
