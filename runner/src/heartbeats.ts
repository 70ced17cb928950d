// The runner's heartbeats: one loop (shared/heartbeat-loop.ts) per armed process still running,
// carrying the last 4 KiB of its output. When one starts and stops (arm, completion) is the runner's.
import {
  type HeartbeatEnd,
  HeartbeatLoop,
  type HeartbeatProgress,
  heartbeatUrlOf,
  type Liveness,
} from "../../shared/heartbeat-loop";
import { utf8Tail } from "../../shared/output-budget";
import type { ManagedProcess } from "./process-table";

export type { Liveness };

/** What a heartbeat shows of the output: about what a model reads in a glance. */
export const PROGRESS_TAIL_BYTES = 4096;

export function progressOf(process: ManagedProcess): HeartbeatProgress {
  const tail = utf8Tail(process.full.lastBytes(PROGRESS_TAIL_BYTES), PROGRESS_TAIL_BYTES);
  return {
    output_tail: Buffer.from(tail).toString("utf8"),
    output_bytes_total: process.full.totalBytes,
  };
}

interface HeartbeatsOptions {
  readonly log: (line: string) => void;
  readonly processOf: (sessionId: string) => ManagedProcess | undefined;
  /** Ends the command as the kill route does, so its result says `ended_by: kill_request`. */
  readonly cancel: (sessionId: string) => void;
  readonly retryBaseMs?: number | undefined;
}

export class Heartbeats {
  private readonly loops = new Map<string, HeartbeatLoop>();

  constructor(private readonly options: HeartbeatsOptions) {}

  /** Starts heartbeating a running process (again: nothing new). */
  start(sessionId: string, completionUrl: string, token: string, liveness: Liveness): void {
    if (this.loops.has(sessionId)) return;
    const url = heartbeatUrlOf(completionUrl, liveness);
    const say = (line: string) => this.options.log(`heartbeat ${sessionId}: ${line}`);
    if (url === null) {
      say("no heartbeat URL; this job is not heartbeated");
      return;
    }
    const loop = new HeartbeatLoop({
      url,
      token,
      timeoutMs: liveness.heartbeat_timeout_ms,
      retryBaseMs: this.options.retryBaseMs,
      log: say,
      progress: () => {
        const process = this.options.processOf(sessionId);
        return process === undefined ? undefined : progressOf(process);
      },
      onCancel: () => this.options.cancel(sessionId),
      onEnd: (_end: HeartbeatEnd) => this.loops.delete(sessionId),
    });
    this.loops.set(sessionId, loop);
  }

  /** Before a completion starts: no heartbeat of this process leaves after it. */
  stop(sessionId: string): void {
    this.loops.get(sessionId)?.stop();
    this.loops.delete(sessionId);
  }

  stopAll(): void {
    for (const sessionId of [...this.loops.keys()]) this.stop(sessionId);
  }
}
