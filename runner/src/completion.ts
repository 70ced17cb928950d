// Turns an ended process into exec-inbox's completion body, and sends it with retries.
// Which callbacks to send, and journaling them, is left to the runner.
import type { z } from "zod";
import type { completionBody } from "../../src/domain/schemas";
import type { ManagedProcess } from "./process-table";

export type CompletionBody = z.input<typeof completionBody>;

export function completionFor(process: ManagedProcess, shuttingDown: boolean): CompletionBody {
  const exit = process.exit;
  const output = process.full.render();
  const base = {
    output: output.text,
    output_truncated: output.truncated,
    output_bytes_total: output.totalBytes,
    observed: process.exitReported,
  };
  if (exit === null || exit.kind === "spawn_failed") {
    return { ...base, status: "failed", exit_code: null, ended_by: "process" };
  }
  const endedBy = process.killRequested
    ? "kill_request"
    : shuttingDown
      ? "runner_shutdown"
      : "process";
  if (exit.kind === "signaled")
    return { ...base, status: "killed", exit_code: null, ended_by: endedBy };
  return { ...base, status: "completed", exit_code: exit.exitCode, ended_by: endedBy };
}

/** The runner died while the process ran: its outcome is unknown. */
export const lostCompletion = (): CompletionBody => ({
  status: "lost",
  exit_code: null,
  output: "",
  output_truncated: false,
  output_bytes_total: 0,
  ended_by: "runner_shutdown",
  observed: false,
});

export type SendOutcome =
  | { kind: "delivered"; status: number; outcome: string }
  | { kind: "refused"; status: number; code: string }
  | { kind: "stopped" };

export interface SenderOptions {
  readonly log: (line: string) => void;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly random?: () => number;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Seconds or an HTTP date, per RFC 9110; null when absent or unreadable. */
function retryAfterMs(header: string | null, now: number): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * POSTs one completion until exec-inbox answers 2xx (accepted or duplicate) or refuses it for good
 * (401, 409, 410, other 4xx). 5xx, 429 and network errors are retried with backoff and jitter.
 */
export async function sendCompletion(
  target: { sessionId: string; url: string; token: string; body: CompletionBody },
  options: SenderOptions,
  signal: AbortSignal,
): Promise<SendOutcome> {
  const base = options.baseDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 30_000;
  const random = options.random ?? Math.random;
  for (let attempt = 1; !signal.aborted; attempt += 1) {
    let delay = Math.min(cap, base * 2 ** (attempt - 1)) * (0.5 + random() / 2);
    try {
      const response = await fetch(target.url, {
        method: "POST",
        headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" },
        body: JSON.stringify(target.body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(30_000)]),
      });
      const text = await response.text();
      if (response.ok) {
        const outcome = (JSON.parse(text) as { outcome?: string }).outcome ?? "accepted";
        options.log(`callback ${target.sessionId}: ${outcome} (${response.status})`);
        return { kind: "delivered", status: response.status, outcome };
      }
      if (response.status !== 429 && response.status < 500) {
        let code = "unknown";
        try {
          code = (JSON.parse(text) as { code?: string }).code ?? code;
        } catch {
          // Not a problem document; the status says enough.
        }
        options.log(
          `callback ${target.sessionId}: refused with ${response.status} ${code}; not retrying`,
        );
        return { kind: "refused", status: response.status, code };
      }
      const hinted = retryAfterMs(response.headers.get("retry-after"), Date.now());
      if (hinted !== null) delay = Math.max(delay, hinted);
      options.log(
        `callback ${target.sessionId}: ${response.status}, retry ${attempt} in ${Math.round(delay)} ms`,
      );
    } catch (error) {
      if (signal.aborted) break;
      const name = error instanceof Error ? error.name : "Error";
      options.log(
        `callback ${target.sessionId}: ${name}, retry ${attempt} in ${Math.round(delay)} ms`,
      );
    }
    await sleep(delay, signal);
  }
  return { kind: "stopped" };
}
