// One job's heartbeats to exec-inbox (contract §9): their period, the retry of one that failed, the
// answers that end them, and the cancel an answer carries. What the job's progress is, and what a
// cancel does to its command, are the caller's (the runner's heartbeats.ts, the client's job handle).
import type { z } from "zod";
import {
  HEARTBEAT_TIMEOUT_MIN_MS,
  type heartbeatBody,
  type heartbeatReply,
  MAX_OUTPUT_TAIL_BYTES,
} from "./exec-wire";
import { utf8Tail } from "./output-budget";

export type HeartbeatProgress = z.input<typeof heartbeatBody>;
export type HeartbeatReply = z.output<typeof heartbeatReply>;

/** How often a job without a timeout heartbeats: progress only, nothing is declared lost. */
export const IDLE_PERIOD_MS = 30_000;
/** First retry of a failed heartbeat; it doubles, capped at the period and at RETRY_MAX_MS. */
export const RETRY_BASE_MS = 1_000;
/**
 * The longest wait between two tries while heartbeats fail: once the service is back, the job
 * must be heard within its grace even after a long outage (a retry a whole period later could
 * miss it when a second restart follows). exec-inbox's liveness rule counts on this bound.
 */
export const RETRY_MAX_MS = 2_000;

/**
 * Every third of the timeout, so two heartbeats in a row may fail and be retried before the
 * service declares the job lost. `undefined` is an arm that did not say (an older caller): the
 * first heartbeat goes as early as the shortest timeout a service may hold needs, and its answer
 * names the real one.
 */
export function heartbeatPeriodMs(timeoutMs: number | null | undefined): number {
  if (timeoutMs === undefined) return Math.floor(HEARTBEAT_TIMEOUT_MIN_MS / 3);
  return timeoutMs === null ? IDLE_PERIOD_MS : Math.floor(timeoutMs / 3);
}

/** A callback's liveness fields; absent ones are an older service's or caller's. */
export interface Liveness {
  readonly heartbeat_url?: string | null | undefined;
  readonly heartbeat_timeout_ms?: number | null | undefined;
}

/**
 * The heartbeat URL of a callback: the one it names, else the completion URL's sibling (from before
 * heartbeats), else none. An explicit null is a service that takes no heartbeats.
 */
export function heartbeatUrlOf(completionUrl: string, liveness: Liveness): string | null {
  if (liveness.heartbeat_url !== undefined) return liveness.heartbeat_url;
  const url = new URL(completionUrl);
  if (!url.pathname.endsWith("/completion")) return null;
  url.pathname = `${url.pathname.slice(0, -"/completion".length)}/heartbeat`;
  return url.href;
}

/** Why a loop ended by itself: the service holds a result, or will never take a heartbeat. */
export interface HeartbeatEnd {
  readonly status: number;
  readonly code: string;
}

export interface HeartbeatLoopOptions {
  readonly url: string;
  readonly token: string;
  readonly timeoutMs: number | null | undefined;
  /** The job's progress now; the loop cuts a longer tail to what the route takes (16 KiB). */
  readonly progress: () => HeartbeatProgress | undefined;
  /** Called once, on the first answer that says `cancel_requested`. */
  readonly onCancel: () => void;
  /** 409/410 (the job has a result, or nobody can take one), 401, 404: no more heartbeats. */
  readonly onEnd?: (end: HeartbeatEnd) => void;
  readonly log?: (line: string) => void;
  readonly fetch?: (request: Request) => Promise<Response>;
  /** Delay of the first heartbeat (default: the period); 0 after a restart, when time was lost. */
  readonly firstAfterMs?: number;
  readonly retryBaseMs?: number;
}

type Verdict = "ok" | "end" | "retry" | "doubtful";

function verdictOf(status: number): Verdict {
  if (status >= 200 && status < 300) return "ok";
  if (status === 409 || status === 410 || status === 401 || status === 404) return "end";
  if (status === 429 || status >= 500) return "retry";
  return "doubtful";
}

function problemCode(text: string): string {
  try {
    return String((JSON.parse(text) as { code?: unknown } | null)?.code ?? "unknown");
  } catch {
    return "unknown"; // A proxy's page: the status says enough.
  }
}

function replyOf(text: string): HeartbeatReply | null {
  try {
    const reply = JSON.parse(text) as Partial<HeartbeatReply> | null;
    if (typeof reply?.cancel_requested !== "boolean") return null;
    const timeout = reply.heartbeat_timeout_ms;
    return {
      status: "running",
      cancel_requested: reply.cancel_requested,
      heartbeat_timeout_ms: typeof timeout === "number" ? timeout : null,
    };
  } catch {
    return null;
  }
}

function boundedTail(progress: HeartbeatProgress | undefined): HeartbeatProgress {
  if (progress?.output_tail === undefined) return progress ?? {};
  const bytes = new TextEncoder().encode(progress.output_tail);
  if (bytes.byteLength <= MAX_OUTPUT_TAIL_BYTES) return progress;
  const tail = new TextDecoder().decode(utf8Tail(bytes, MAX_OUTPUT_TAIL_BYTES));
  return { ...progress, output_tail: tail };
}

export class HeartbeatLoop {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: AbortController | null = null;
  private stopped = false;
  private failures = 0;
  private cancelSeen = false;
  private timeoutMs: number | null | undefined;
  private readonly fetcher: (request: Request) => Promise<Response>;

  constructor(private readonly options: HeartbeatLoopOptions) {
    this.timeoutMs = options.timeoutMs;
    this.fetcher = options.fetch ?? ((request) => fetch(request));
    this.schedule(options.firstAfterMs ?? this.periodMs);
  }

  get periodMs(): number {
    return heartbeatPeriodMs(this.timeoutMs);
  }

  get cancelRequested(): boolean {
    return this.cancelSeen;
  }

  get running(): boolean {
    return !this.stopped;
  }

  /** Synchronous: no heartbeat starts after it returns, and one on the wire is abandoned. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.inFlight?.abort();
    this.inFlight = null;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.beat(), Math.max(0, ms));
  }

  private say(line: string): void {
    this.options.log?.(line);
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    const sentAt = Date.now();
    // A heartbeat that hangs (a half-open connection) must not outlive the next one's turn.
    const bound = Math.min(30_000, Math.max(1000, this.periodMs));
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), bound);
    this.inFlight = controller;
    let status = 0;
    let text = "";
    let retryAfter: string | null = null;
    try {
      const response = await this.fetcher(
        new Request(this.options.url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${this.options.token}`,
            "content-type": "application/json",
          },
          body: JSON.stringify(boundedTail(this.options.progress())),
          signal: controller.signal,
        }),
      );
      text = await response.text();
      status = response.status;
      retryAfter = response.headers.get("retry-after");
    } catch (error) {
      if (this.stopped) return;
      text = error instanceof Error ? error.name : "Error";
    } finally {
      clearTimeout(timeout);
      if (this.inFlight === controller) this.inFlight = null;
    }
    if (this.stopped) return;
    this.settle(status, text, retryAfter, sentAt);
  }

  private settle(status: number, text: string, retryAfter: string | null, sentAt: number): void {
    const verdict = status === 0 ? "retry" : verdictOf(status);
    if (verdict === "ok") {
      this.failures = 0;
      const reply = replyOf(text);
      if (reply !== null) this.timeoutMs = reply.heartbeat_timeout_ms;
      if (reply?.cancel_requested && !this.cancelSeen) {
        this.cancelSeen = true;
        this.say("cancel requested; ending the command");
        try {
          this.options.onCancel();
        } catch (error) {
          // The caller's to fix; the heartbeats (and the job's deadline) must not die of it.
          this.say(`ending the command failed: ${error instanceof Error ? error.message : error}`);
        }
      }
      // Counted from when this one left: the service's deadline counts from when it arrived.
      this.schedule(sentAt + this.periodMs - Date.now());
      return;
    }
    const code = status === 0 ? text : problemCode(text);
    if (verdict === "end") {
      this.say(`heartbeat refused with ${status} ${code}; no more heartbeats for this job`);
      this.stop();
      this.options.onEnd?.({ status, code });
      return;
    }
    if (verdict === "doubtful") {
      // Not a verdict on the job (a proxy, a body the service does not take): keep the rhythm.
      this.say(`heartbeat answered ${status} ${code}; next one in ${this.periodMs} ms`);
      this.schedule(sentAt + this.periodMs - Date.now());
      return;
    }
    this.failures += 1;
    const base = this.options.retryBaseMs ?? RETRY_BASE_MS;
    const hinted = retryAfter === null ? 0 : Number(retryAfter) * 1000 || 0;
    // Capped at the period and at RETRY_MAX_MS: a restart of the service must never cost the job
    // its deadline, however long the outage before it.
    const delay = Math.min(
      this.periodMs,
      RETRY_MAX_MS,
      Math.max(hinted, base * 2 ** (this.failures - 1)),
    );
    this.say(`heartbeat ${status === 0 ? code : `${status} ${code}`}, retry in ${delay} ms`);
    this.schedule(delay);
  }
}
