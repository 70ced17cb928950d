// The exec job's wire shapes the Worker shares with its callers: the command limit an agent checks
// before reserving a job, and the completion body a runner sends. Validating requests is left to each program.
import { z } from "zod";
import { fullOutputBody } from "./full-output";

export const MAX_COMMAND_BYTES = 8 * 1024;

export const TERMINAL_STATUSES = ["completed", "failed", "killed", "lost"] as const;
export const ENDED_BY = [
  "process",
  "runner_timeout",
  "runner_shutdown",
  "kill_request",
  // The runner ended the command at one of its limits (runner/src/limit-watch.ts).
  "memory_limit",
  "pids_limit",
  "output_limit",
  "disk_limit",
] as const;

/**
 * Room for the runner's own text, which `output_bytes_total` does not count: a cut marker such as
 * "…[N bytes omitted]…" in a truncated output, a line naming the signal in a killed one.
 */
const RUNNER_TEXT_ALLOWANCE_BYTES = 256;
const REPLACEMENT_CHARACTER = /\uFFFD/g;

/**
 * The raw bytes an output stands for, at least and at most. `output_bytes_total` counts what the
 * command wrote; the output is its UTF-8 text, where each undecodable run of 1–3 bytes is one
 * U+FFFD (3 bytes of UTF-8), so only the replacement characters make the two counts differ.
 */
function rawBytesRange(output: string): { min: number; max: number } {
  const max = new TextEncoder().encode(output).byteLength;
  const replaced = output.match(REPLACEMENT_CHARACTER)?.length ?? 0;
  return { min: max - 2 * replaced, max };
}

export const completionBody = z
  .strictObject({
    status: z.enum(TERMINAL_STATUSES),
    exit_code: z.int().min(-2147483648).max(2147483647).nullable(),
    output: z.string(),
    output_truncated: z.boolean().default(false),
    output_bytes_total: z.int().min(0).optional(),
    ended_by: z.enum(ENDED_BY).optional(),
    observed: z.boolean().default(false),
    /** The full output uploaded beside the result, by parts (shared/full-output.ts). */
    full_output: fullOutputBody.optional(),
  })
  .superRefine((body, issues) => {
    const total = body.output_bytes_total;
    if (total === undefined) return;
    const { min, max } = rawBytesRange(body.output);
    // Only a total below what the output itself shows is impossible. A larger one is kept as sent:
    // a runner may trim, normalise line ends or fold a long undecodable run into one U+FFFD, and
    // refusing it would lose the result over a count.
    const runnerText = body.output_truncated || body.status === "killed";
    const floor = runnerText ? min - RUNNER_TEXT_ALLOWANCE_BYTES : min;
    const problem =
      total < floor
        ? `is ${total}, but the ${body.output_truncated ? "truncated " : ""}output shows at least ${floor} bytes${min === max ? "" : ` (its UTF-8 is ${max} bytes)`}`
        : null;
    if (problem !== null) {
      issues.addIssue({ code: "custom", path: ["output_bytes_total"], message: problem });
    }
  });

/** Liveness (contract §9): the timeout a reservation may ask for, and what a heartbeat carries. */
export const HEARTBEAT_TIMEOUT_MIN_MS = 5_000;
export const HEARTBEAT_TIMEOUT_MAX_MS = 86_400_000;
export const MAX_OUTPUT_TAIL_BYTES = 16 * 1024;

export const heartbeatTimeoutMs = z
  .int()
  .min(HEARTBEAT_TIMEOUT_MIN_MS)
  .max(HEARTBEAT_TIMEOUT_MAX_MS);

/** A heartbeat's body: optional progress. An empty body (or none) is a bare heartbeat. */
export const heartbeatBody = z
  .strictObject({
    output_tail: z
      .string()
      .refine((tail) => new TextEncoder().encode(tail).byteLength <= MAX_OUTPUT_TAIL_BYTES, {
        message: "output_tail is longer than 16 KiB of UTF-8",
      })
      .optional(),
    output_bytes_total: z.int().min(0).optional(),
  })
  .superRefine((body, issues) => {
    // As for a completion: a total below what the tail itself shows is impossible.
    if (body.output_tail === undefined || body.output_bytes_total === undefined) return;
    const { min } = rawBytesRange(body.output_tail);
    if (body.output_bytes_total < min) {
      issues.addIssue({
        code: "custom",
        path: ["output_bytes_total"],
        message: `is ${body.output_bytes_total}, but output_tail shows at least ${min} bytes`,
      });
    }
  });

/** What a heartbeat is answered: the runner ends the command when `cancel_requested`. */
export const heartbeatReply = z.strictObject({
  status: z.literal("running"),
  cancel_requested: z.boolean(),
  heartbeat_timeout_ms: z.int().nullable(),
});

/** ended_by values only the service sets: an operator's mark, a runner that stopped heartbeating. */
export const SERVICE_ENDED_BY = ["operator", "heartbeat_timeout"] as const;
