// POSTs one completion to exec-inbox until an answer settles it (docs/design/runner-protocol.md).
// Journaling the outcome, and what to do with an abandoned result, is left to the runner.
import type { CompletionBody } from "./completion";
import { OutputBuffer } from "./output-buffer";

export type SendOutcome =
  | { kind: "delivered"; status: number; outcome: string }
  | { kind: "refused"; status: number; code: string }
  | { kind: "abandoned"; status: number; code: string; body: CompletionBody }
  | { kind: "stopped" };

/**
 * What an answer means for the result, the only copy of which the runner holds:
 * - `final`: exec-inbox holds a result for the job (409) or nobody can ever take one (410);
 * - `shrink`: over exec-inbox's limit (413): resend without `full_output`, then the output
 *   shorter, status intact;
 * - `transient`: try later, however long (429, 5xx);
 * - `doubtful`: any other refusal (401, 404, 422…): a misconfiguration an operator can fix, so
 *   retried until the give-up window ends, then the result is parked in the dead-letter file.
 */
type Verdict = "delivered" | "final" | "shrink" | "transient" | "doubtful";

function verdictOf(status: number): Verdict {
  if (status >= 200 && status < 300) return "delivered";
  if (status === 409 || status === 410) return "final";
  if (status === 413) return "shrink";
  if (status === 429 || status >= 500) return "transient";
  return "doubtful";
}

/** Below this, the output goes entirely: the status and exit code are what must get through. */
const SMALLEST_OUTPUT = 1024;

/**
 * What to resend after a 413: first without `full_output` (over exec-inbox's full-output limit,
 * `errors[0].path` "full_output.bytes"; its head and tail are still the result), then the output
 * halved (head + tail on UTF-8 boundaries); null once there is nothing left to cut.
 */
function shrunk(body: CompletionBody): CompletionBody | null {
  if (body.full_output !== undefined) {
    const { full_output: _dropped, ...rest } = body;
    return rest;
  }
  const bytes = Buffer.from(body.output);
  if (bytes.byteLength === 0) return null;
  const budget = Math.floor(bytes.byteLength / 2);
  let output = "";
  if (budget >= SMALLEST_OUTPUT) {
    const buffer = new OutputBuffer(budget, budget);
    buffer.append(bytes);
    output = buffer.render(budget).text;
  }
  return { ...body, output, output_truncated: true };
}

interface SenderOptions {
  readonly log: (line: string) => void;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly giveUpMs?: number;
  /** One attempt's bound (30 s): a half-open connection must not hold the result longer. */
  readonly attemptTimeoutMs?: number;
  readonly random?: () => number;
}

interface SendTarget {
  readonly sessionId: string;
  readonly url: string;
  readonly token: string;
  readonly body: CompletionBody;
  /** When the result was recorded: the give-up window of doubtful refusals counts from here. */
  readonly since: number;
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

function problemCode(text: string): string {
  try {
    return (JSON.parse(text) as { code?: string }).code ?? "unknown";
  } catch {
    return "unknown"; // Not a problem document (a proxy's page): the status says enough.
  }
}

/** exec-inbox's `outcome` (`accepted`, `duplicate`); `accepted` if it names none; null if not JSON. */
function deliveredOutcome(text: string): string | null {
  try {
    const outcome = (JSON.parse(text) as { outcome?: unknown } | null)?.outcome;
    return typeof outcome === "string" ? outcome : "accepted";
  } catch {
    return null;
  }
}

export async function sendCompletion(
  target: SendTarget,
  options: SenderOptions,
  signal: AbortSignal,
): Promise<SendOutcome> {
  const base = options.baseDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 30_000;
  const giveUpMs = options.giveUpMs ?? 24 * 3_600_000;
  const random = options.random ?? Math.random;
  const say = (line: string) => options.log(`callback ${target.sessionId}: ${line}`);
  let body = target.body;
  for (let attempt = 1; !signal.aborted; attempt += 1) {
    let delay = Math.min(cap, base * 2 ** (attempt - 1)) * (0.5 + random() / 2);
    try {
      const response = await fetch(target.url, {
        method: "POST",
        headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(options.attemptTimeoutMs ?? 30_000)]),
      });
      const text = await response.text();
      const status = response.status;
      const verdict = verdictOf(status);
      if (verdict === "delivered") {
        // A 2xx settles the callback whatever its body: resending on a proxy's page would never end.
        const outcome = deliveredOutcome(text);
        say(
          outcome === null
            ? `delivered (${status}), body not JSON: ${JSON.stringify(text.slice(0, 120))}`
            : `${outcome} (${status})`,
        );
        return { kind: "delivered", status, outcome: outcome ?? "delivered" };
      }
      const code = problemCode(text);
      if (verdict === "final") {
        say(`refused with ${status} ${code}; not retrying`);
        return { kind: "refused", status, code };
      }
      const smaller = verdict === "shrink" ? shrunk(body) : null;
      if (smaller !== null) {
        say(
          body.full_output !== undefined && smaller.full_output === undefined
            ? `${status} ${code}; resending without the full output`
            : `${status} ${code}; resending with ${Buffer.byteLength(smaller.output)} bytes of output`,
        );
        body = smaller;
        continue;
      }
      if (verdict !== "transient" && Date.now() - target.since >= giveUpMs) {
        say(`${status} ${code} for ${Math.round(giveUpMs / 1000)} s; giving up, result parked`);
        return { kind: "abandoned", status, code, body };
      }
      const hinted = retryAfterMs(response.headers.get("retry-after"), Date.now());
      if (hinted !== null) delay = Math.max(delay, hinted);
      say(`${status} ${code}, retry ${attempt} in ${Math.round(delay)} ms`);
    } catch (error) {
      if (signal.aborted) break;
      const name = error instanceof Error ? error.name : "Error";
      say(`${name}, retry ${attempt} in ${Math.round(delay)} ms`);
    }
    await sleep(delay, signal);
  }
  return { kind: "stopped" };
}
