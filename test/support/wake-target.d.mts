// Types of wake-target.mjs (plain JavaScript, so workerd loads it as it is).
import type { WorkerEntrypoint } from "cloudflare:workers";

export interface WakeCall {
  readonly resume: {
    readonly type: "session.resume";
    readonly tenant: string;
    readonly session_id: string;
    readonly lifetime: string;
    readonly resume_id: string;
    readonly reason: string;
    readonly inbox: { readonly pending: number };
  };
  readonly received_at: number;
}

export type WakeOutcome = "ok" | "throw" | "hang" | "unserializable";

export declare class WakeTarget extends WorkerEntrypoint {
  wake(resume: WakeCall["resume"]): Promise<{ ok: true }>;
  script(sessionId: string, outcomes: readonly WakeOutcome[]): void;
  calls(sessionId: string): WakeCall[];
}

declare const worker: { fetch(request: Request): Response };
export default worker;
