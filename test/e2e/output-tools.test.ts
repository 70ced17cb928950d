// The kit's output tools on a hostile full output: grep_output searches a literal text unless
// regex: true, a regex that backtracks for ever is stopped by its budget, pages end on whole characters.

import { outputTools } from "@exec-inbox/ai-sdk/output-tools";
import { describe, expect, it } from "vitest";

/** A stand-in client whose full output is `text`, streamed in 64 KiB chunks. */
function fakeInbox(text: string | (() => ReadableStream<Uint8Array>)) {
  return {
    readFullOutput: async () => {
      if (typeof text !== "string") return new Response(text());
      const bytes = new TextEncoder().encode(text);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= bytes.byteLength) return controller.close();
          controller.enqueue(bytes.subarray(sent, sent + 65536));
          sent += 65536;
        },
      });
      return new Response(body, { headers: { "content-length": String(bytes.byteLength) } });
    },
  };
}

const call = { toolCallId: "t", messages: [], context: {} };
type Answer = { matched_lines?: number; output?: string; error?: string };
const grep = async (
  text: Parameters<typeof fakeInbox>[0],
  input: { pattern: string; regex?: boolean; ignore_case?: boolean },
  regexBudgetMs?: number,
) => {
  const tools = outputTools({
    inbox: fakeInbox(text) as never,
    sessionId: "s",
    ...(regexBudgetMs === undefined ? {} : { regexBudgetMs }),
  });
  return (await tools.grep_output.execute!({ session_id: "h", ...input }, call)) as Answer;
};

describe("grep_output on hostile output", () => {
  it("a catastrophic regex is stopped by its budget: the host goes on, the model is told", async () => {
    const hostile = `${"a".repeat(30)}!\n`.repeat(50);
    const t0 = Date.now();
    // The event loop must stay free while the worker backtracks: a timer fires on time.
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 50);
    const answer = await grep(hostile, { pattern: "^(a+)+$", regex: true }, 500);
    clearInterval(ticker);
    expect(answer.error).toMatch(/took too long/);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(ticks).toBeGreaterThan(3);
  }, 20_000);

  it("the pattern is a literal text by default: metacharacters are matched as themselves", async () => {
    const text = "a.b\naxb\n(a+)+$ literal\nA.B\n";
    expect(await grep(text, { pattern: "a.b" })).toMatchObject({
      matched_lines: 1,
      output: "1: a.b",
    });
    expect(await grep(text, { pattern: "(a+)+$" })).toMatchObject({ matched_lines: 1 });
    expect(await grep(text, { pattern: "a.b", ignore_case: true })).toMatchObject({
      matched_lines: 2,
      output: "1: a.b\n4: A.B",
    });
  });

  it("regex: true searches with a regular expression, across batches, line numbers kept", async () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => String(i + 1));
    const answer = await grep(`${lines.join("\n")}\n`, { pattern: "^999[0-9]$", regex: true });
    expect(answer).toMatchObject({
      matched_lines: 10,
      output: expect.stringContaining("9990: 9990"),
    });
    expect(await grep("x\n", { pattern: "(", regex: true })).toMatchObject({
      error: expect.stringMatching(/not a regular expression/),
    });
  });

  it("a 32 MiB single line ending in the needle: searched in bounded memory, found", async () => {
    const total = 32 * 1024 * 1024;
    const chunk = new Uint8Array(65536).fill(97);
    let sent = 0;
    const stream = () =>
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= total) {
            controller.enqueue(new TextEncoder().encode("NEEDLE\n"));
            return controller.close();
          }
          controller.enqueue(chunk);
          sent += chunk.byteLength;
        },
      });
    const answer = await grep(stream, { pattern: "a" });
    expect(answer.matched_lines).toBe(1);
  }, 60_000);
});

describe("read_output pages", () => {
  it("a page that would end inside a character ends before it; next_offset starts with it", async () => {
    // "ab" then "é" (2 bytes) then "c": a page of 3 bytes would cut the é.
    const text = "abéc";
    const bytes = new TextEncoder().encode(text);
    const inbox = {
      readFullOutput: async (
        _s: string,
        _h: string,
        range?: { offset: number; length: number },
      ) => {
        const start = range?.offset ?? 0;
        const slice = bytes.subarray(start, start + (range?.length ?? bytes.byteLength));
        return new Response(slice, {
          status: 206,
          headers: {
            "content-range": `bytes ${start}-${start + slice.byteLength - 1}/${bytes.byteLength}`,
          },
        });
      },
    };
    const tools = outputTools({ inbox: inbox as never, sessionId: "s" });
    const first = await tools.read_output.execute!({ session_id: "h", offset: 0, limit: 3 }, call);
    expect(first).toMatchObject({ output: "ab", bytes: 2, next_offset: 2 });
    const second = await tools.read_output.execute!({ session_id: "h", offset: 2, limit: 3 }, call);
    expect(second).toMatchObject({ output: "éc", bytes: 3, next_offset: null });
  });
});
