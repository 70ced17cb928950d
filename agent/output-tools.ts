// The model's `read_output` and `grep_output` tools: page and search a background command's full
// output (contract §9), streamed from exec-inbox into the host, never whole in memory or context.
// Which session they read, and the client, are the caller's.

import { type ExecInboxClient, ExecInboxError } from "@exec-inbox/client";
import { tool } from "ai";
import { z } from "zod";
import { capText, outputBudget, utf8WholeLength } from "../shared/output-budget";

export interface OutputToolContext {
  readonly inbox: ExecInboxClient;
  readonly sessionId: string;
  /**
   * How long a `regex: true` search may spend on one batch of lines (default 2 s) before it is
   * stopped: the output is hostile input, and a pattern may backtrack for ever on it.
   */
  readonly regexBudgetMs?: number;
}

const DEFAULT_REGEX_BUDGET_MS = 2_000;
/** Lines handed to the regex worker at once: few messages, and a budget that means something. */
const BATCH_LINES = 4096;
const BATCH_CHARS = 1024 * 1024;

/** One page: 16 KiB by default, 64 KiB at most, like the other tools' answers. */
const DEFAULT_PAGE_BYTES = 16 * 1024;
const MAX_PAGE_BYTES = 64 * 1024;
const MAX_MATCHES = 200;
/** A matching line longer than this is cut: one minified line must not fill the answer. */
const MAX_LINE_BYTES = 512;

const readOutputInput = z.object({
  session_id: z.string().min(1).describe("The background command's session_id."),
  offset: z.int().min(0).optional().describe("First byte to read (default 0)."),
  limit: z
    .int()
    .min(1)
    .max(MAX_PAGE_BYTES)
    .optional()
    .describe(`Bytes to read (default ${DEFAULT_PAGE_BYTES}, at most ${MAX_PAGE_BYTES}).`),
});

const grepOutputInput = z.object({
  session_id: z.string().min(1).describe("The background command's session_id."),
  pattern: z
    .string()
    .min(1)
    .max(1024)
    .describe("The text to find in each line (a literal substring unless regex is true)."),
  regex: z
    .boolean()
    .optional()
    .describe(
      "Treat pattern as a JavaScript regular expression (default false). A pattern that takes too long is stopped.",
    ),
  ignore_case: z.boolean().optional(),
  max_matches: z.int().min(1).max(MAX_MATCHES).optional().describe(`At most ${MAX_MATCHES}.`),
  max_output_tokens: z.int().min(1).max(1_000_000).optional(),
});

/** What the model is told instead of a stack: no full output, or a range past its end. */
async function refusal(error: unknown, sessionId: string) {
  if (error instanceof ExecInboxError) {
    if (error.problem.code === "range_not_satisfiable") {
      return { session_id: sessionId, error: `offset is past the end: ${error.problem.detail}` };
    }
    if (error.problem.status === 404 || error.problem.status === 410) {
      return {
        session_id: sessionId,
        error: `no full output: ${error.problem.detail}. Use write_stdin for the head and tail.`,
      };
    }
  }
  throw error;
}

const totalOf = (response: Response): number | null => {
  const range = response.headers.get("content-range");
  const total = range === null ? response.headers.get("content-length") : range.split("/")[1];
  return total === undefined || total === null ? null : Number(total);
};

/** Lines of a byte stream with their 1-based numbers; a line never outgrows `MAX_LINE_BYTES` kept. */
async function* linesOf(body: ReadableStream<Uint8Array> | null) {
  if (body === null) return;
  const decoder = new TextDecoder();
  let carry = "";
  let number = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const text = carry + decoder.decode(chunk, { stream: true });
    const lines = text.split("\n");
    carry = lines.pop() ?? "";
    // A line with no end in sight is kept only as far as it can be shown.
    if (carry.length > 4 * MAX_LINE_BYTES) carry = carry.slice(0, 4 * MAX_LINE_BYTES);
    for (const line of lines) {
      number += 1;
      yield { number, line };
    }
  }
  const rest = carry + decoder.decode();
  if (rest !== "") yield { number: number + 1, line: rest };
}

/** Which lines of a batch match; null when the time budget ran out first. */
interface LineMatcher {
  matches(lines: readonly string[]): Promise<readonly boolean[] | null>;
  close(): void;
}

function literalMatcher(pattern: string, ignoreCase: boolean): LineMatcher {
  const needle = ignoreCase ? pattern.toLowerCase() : pattern;
  return {
    matches: async (lines) =>
      lines.map((line) => (ignoreCase ? line.toLowerCase() : line).includes(needle)),
    close: () => undefined,
  };
}

/** The regex runs here, in a worker thread the host can terminate: V8 cannot stop a RegExp. */
const REGEX_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const pattern = new RegExp(workerData.source, workerData.flags);
parentPort.on("message", (lines) => {
  parentPort.postMessage(lines.map((line) => pattern.test(line)));
});`;

interface WorkerLike {
  on(event: "message", listener: (value: boolean[]) => void): void;
  on(event: "error", listener: (error: Error) => void): void;
  off(event: "message" | "error", listener: (value: never) => void): void;
  postMessage(value: unknown): void;
  terminate(): Promise<number>;
}

/**
 * A regex matched in a worker thread, each batch within `budgetMs`; null where there are no
 * worker threads (a Cloudflare Worker host): there only literal searches are offered.
 */
async function regexMatcher(pattern: RegExp, budgetMs: number): Promise<LineMatcher | null> {
  // Not an import: the kit is also bundled for Cloudflare Workers, which have no worker threads,
  // and whose bundler and types know no `node:worker_threads` (Node has getBuiltinModule since 20.16).
  let threads: { Worker?: new (code: string, options: object) => WorkerLike } | undefined;
  try {
    const host = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } };
    threads = host.process?.getBuiltinModule?.("node:worker_threads") as typeof threads;
  } catch {
    return null;
  }
  if (threads === undefined || typeof threads.Worker !== "function") return null;
  const worker = new threads.Worker(REGEX_WORKER, {
    eval: true,
    workerData: { source: pattern.source, flags: pattern.flags },
  });
  return {
    matches: (lines) =>
      new Promise((resolve, reject) => {
        const settle = () => {
          clearTimeout(timer);
          worker.off("message", onMessage);
          worker.off("error", onError);
        };
        const onMessage = (hits: boolean[]) => {
          settle();
          resolve(hits);
        };
        const onError = (error: Error) => {
          settle();
          reject(error);
        };
        const timer = setTimeout(() => {
          settle();
          resolve(null);
        }, budgetMs);
        worker.on("message", onMessage);
        worker.on("error", onError);
        worker.postMessage(lines);
      }),
    close: () => void worker.terminate(),
  };
}

/** Lines in batches for a matcher: at most BATCH_LINES lines and about BATCH_CHARS characters. */
async function* batchesOf(lines: AsyncIterable<{ number: number; line: string }>) {
  let batch: { number: number; line: string }[] = [];
  let chars = 0;
  for await (const entry of lines) {
    batch.push(entry);
    chars += entry.line.length;
    if (batch.length >= BATCH_LINES || chars >= BATCH_CHARS) {
      yield batch;
      batch = [];
      chars = 0;
    }
  }
  if (batch.length > 0) yield batch;
}

export function outputTools(ctx: OutputToolContext) {
  return {
    read_output: tool({
      description:
        "Read a page of a finished background command's full output, by byte offset: for outputs too long for write_stdin, which keeps only the head and tail. Answers the bytes, the total size and the next offset.",
      inputSchema: readOutputInput,
      execute: async (input) => {
        const offset = input.offset ?? 0;
        const limit = input.limit ?? DEFAULT_PAGE_BYTES;
        try {
          const response = await ctx.inbox.readFullOutput(ctx.sessionId, input.session_id, {
            offset,
            length: limit,
          });
          const read = new Uint8Array(await response.arrayBuffer());
          const total = totalOf(response);
          // A page that ends inside a character ends before it: the next page starts with it whole.
          const whole =
            total !== null && offset + read.byteLength >= total
              ? read.byteLength
              : utf8WholeLength(read);
          const bytes = read.subarray(0, whole > 0 ? whole : read.byteLength);
          const end = offset + bytes.byteLength;
          return {
            session_id: input.session_id,
            offset,
            bytes: bytes.byteLength,
            total_bytes: total,
            output: new TextDecoder().decode(bytes),
            next_offset: total !== null && end < total ? end : null,
          };
        } catch (error) {
          return refusal(error, input.session_id);
        }
      },
    }),
    grep_output: tool({
      description:
        "Search a finished background command's full output line by line, for a literal text (or a regular expression with regex: true). Answers the matching lines with their line numbers (the first max_matches), and how many lines matched in all.",
      inputSchema: grepOutputInput,
      execute: async (input) => {
        let matcher: LineMatcher;
        const budgetMs = ctx.regexBudgetMs ?? DEFAULT_REGEX_BUDGET_MS;
        if (input.regex === true) {
          let pattern: RegExp;
          try {
            pattern = new RegExp(input.pattern, input.ignore_case ? "i" : "");
          } catch (error) {
            return {
              session_id: input.session_id,
              error: `not a regular expression: ${String(error)}`,
            };
          }
          const threaded = await regexMatcher(pattern, budgetMs);
          if (threaded === null) {
            return {
              session_id: input.session_id,
              error: "regular expressions cannot be searched here; search for a literal text",
            };
          }
          matcher = threaded;
        } else {
          matcher = literalMatcher(input.pattern, input.ignore_case === true);
        }
        const max = input.max_matches ?? 50;
        try {
          const response = await ctx.inbox.readFullOutput(ctx.sessionId, input.session_id);
          const shown: string[] = [];
          let matched = 0;
          for await (const batch of batchesOf(linesOf(response.body))) {
            const hits = await matcher.matches(batch.map((entry) => entry.line));
            if (hits === null) {
              // Leaving the loop cancels the stream; closing the matcher ends the worker.
              return {
                session_id: input.session_id,
                error: `the pattern took too long (over ${budgetMs} ms on ${batch.length} lines from line ${batch[0]?.number}), stopped; search for a literal text or a simpler regular expression`,
                matched_lines: matched,
              };
            }
            batch.forEach(({ number, line }, index) => {
              if (!hits[index]) return;
              matched += 1;
              if (shown.length < max)
                shown.push(`${number}: ${capText(line, MAX_LINE_BYTES).text}`);
            });
          }
          // Capped like every other answer: the model's context is the scarce thing.
          const capped = capText(shown.join("\n"), outputBudget(input.max_output_tokens));
          return {
            session_id: input.session_id,
            matched_lines: matched,
            shown: shown.length,
            output: capped.text,
            output_truncated: capped.truncated || matched > shown.length,
          };
        } catch (error) {
          return refusal(error, input.session_id);
        } finally {
          matcher.close();
        }
      },
    }),
  };
}
