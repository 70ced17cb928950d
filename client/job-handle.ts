// A job handle for third-party runners (contract §9): it heartbeats while the command runs, with the
// progress the caller supplies, carries a cancel to the caller, and posts the result with the
// reference runner's retry table. Running the command, and ending it on cancel, are the caller's.
import {
  type HeartbeatEnd,
  HeartbeatLoop,
  type HeartbeatProgress,
  heartbeatUrlOf,
  type Liveness,
} from "../shared/heartbeat-loop";
import { capText } from "../shared/output-budget";
import { ExecInboxError, type Fetcher, globalFetcher, type Problem, problemOf } from "./transport";
import type { Callback, CompletionInput, CompletionReply } from "./wire-types";

/** The reservation's `callback`, passed whole (older services answer without liveness fields). */
export type JobCallback = Callback & Liveness;

export interface StartJobOptions {
  /** The command's progress now: the last of its output (≤ 16 KiB kept) and its byte count. */
  readonly progress?: () => HeartbeatProgress | undefined;
  /** Called once, when a heartbeat's answer says the agent asked to cancel: end the command. */
  readonly onCancel?: () => void;
  /**
   * Called once when exec-inbox ends the job's heartbeats for good: 409 (it has a result — e.g.
   * it was declared lost after a silence), 410, 401 or 404. Its result will be refused too.
   */
  readonly onEnd?: (end: HeartbeatEnd) => void;
  readonly fetch?: Fetcher;
  readonly log?: (line: string) => void;
  /** First retry of a failed heartbeat (1 s) and of a failed completion (500 ms). */
  readonly retryBaseMs?: number;
}

/** How `complete` ended: stored (or already stored, the same), or refused for good. */
export type CompleteOutcome =
  | { readonly kind: "delivered"; readonly reply: CompletionReply | null }
  /** 409: another result is stored (first wins); 410: the session or the job is gone. */
  | { readonly kind: "refused"; readonly problem: Problem };

/** Below this the output goes entirely: the status and exit code are what must get through. */
const SMALLEST_OUTPUT = 1024;
const MAX_RETRY_DELAY_MS = 30_000;

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

function halved(result: CompletionInput): CompletionInput | null {
  const bytes = new TextEncoder().encode(result.output).byteLength;
  if (bytes === 0) return null;
  const budget = Math.floor(bytes / 2);
  const output = budget >= SMALLEST_OUTPUT ? capText(result.output, budget).text : "";
  return { ...result, output, output_truncated: true };
}

export class JobHandle {
  private readonly loop: HeartbeatLoop | null;
  private readonly fetcher: Fetcher;

  constructor(
    private readonly callback: JobCallback,
    private readonly options: StartJobOptions = {},
  ) {
    this.fetcher = options.fetch ?? globalFetcher;
    const url = heartbeatUrlOf(callback.url, callback);
    this.loop =
      url === null
        ? null
        : new HeartbeatLoop({
            url,
            token: callback.token,
            timeoutMs: callback.heartbeat_timeout_ms,
            progress: () => options.progress?.(),
            onCancel: () => options.onCancel?.(),
            onEnd: (end) => options.onEnd?.(end),
            log: options.log,
            fetch: this.fetcher,
            retryBaseMs: options.retryBaseMs,
          });
  }

  /** True once a heartbeat's answer carried the agent's cancel. */
  get cancelRequested(): boolean {
    return this.loop?.cancelRequested ?? false;
  }

  /** False once stopped, completed, or refused for good (409, 410, 401, 404). */
  get heartbeating(): boolean {
    return this.loop?.running ?? false;
  }

  /** Stops heartbeating without a result: the service declares the job lost after its timeout. */
  stop(): void {
    this.loop?.stop();
  }

  /**
   * Posts the result: heartbeats stop first, so none follows it. 2xx is done; 409/410 are final;
   * 413 is resent with the output halved (down to none); 429, 5xx and network errors are retried
   * with backoff until `signal` aborts. Any other answer (401, 404, 422) throws `ExecInboxError`:
   * a mistake to fix, and the caller still holds the result.
   */
  async complete(
    result: CompletionInput,
    options: { signal?: AbortSignal } = {},
  ): Promise<CompleteOutcome> {
    this.stop();
    const base = this.options.retryBaseMs ?? 500;
    // No heartbeat follows the result: a timed job's result must arrive within its timeout, also
    // after a restart of exec-inbox (one grace of a timeout) or a half-open connection.
    const timeout = this.callback.heartbeat_timeout_ms ?? null;
    const cap = timeout === null ? MAX_RETRY_DELAY_MS : Math.min(MAX_RETRY_DELAY_MS, timeout / 3);
    const attemptMs = timeout === null ? 30_000 : Math.floor(timeout / 3);
    let body = result;
    for (let attempt = 1; ; attempt += 1) {
      if (options.signal?.aborted) throw options.signal.reason;
      let delay = Math.min(cap, base * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
      try {
        const response = await this.fetcher(
          new Request(this.callback.url, {
            method: "POST",
            headers: {
              authorization: `Bearer ${this.callback.token}`,
              "content-type": "application/json",
            },
            body: JSON.stringify(body),
            signal: AbortSignal.any([
              ...(options.signal === undefined ? [] : [options.signal]),
              AbortSignal.timeout(attemptMs),
            ]),
          }),
        );
        const text = await response.text();
        const status = response.status;
        if (response.ok) return { kind: "delivered", reply: parsed(text) };
        const problem = problemOf(status, text);
        if (status === 409 || status === 410) return { kind: "refused", problem };
        const smaller = status === 413 ? halved(body) : null;
        if (smaller !== null) {
          body = smaller;
          continue;
        }
        if (status !== 429 && status < 500) throw new ExecInboxError(problem);
        const hinted = Number(response.headers.get("retry-after"));
        if (Number.isFinite(hinted) && hinted > 0) {
          delay = Math.min(cap, Math.max(delay, hinted * 1000));
        }
        this.options.log?.(
          `completion ${status} ${problem.code}, retry in ${Math.round(delay)} ms`,
        );
      } catch (error) {
        if (error instanceof ExecInboxError || options.signal?.aborted) throw error;
        this.options.log?.(`completion ${(error as Error).name}, retry in ${Math.round(delay)} ms`);
      }
      await sleep(delay, options.signal);
    }
  }
}

/** A 2xx whose body is not JSON (a proxy's page) still settles the result. */
function parsed(text: string): CompletionReply | null {
  try {
    return JSON.parse(text) as CompletionReply;
  } catch {
    return null;
  }
}

/** Starts heartbeating the job whose reservation answered `callback`. */
export function startJob(callback: JobCallback, options: StartJobOptions = {}): JobHandle {
  return new JobHandle(callback, options);
}
