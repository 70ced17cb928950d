// Types of agent-host.mjs (plain JavaScript, so workerd loads it as it is).

export interface Delivery {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly received_at: number;
}

/** A status, or a slow answer; status 0 is a network failure. */
export type ScriptedAnswer = number | { readonly status: number; readonly delayMs: number };

export interface AgentHost {
  deliveries(key: string): Delivery[];
  script(key: string, statuses: readonly ScriptedAnswer[]): void;
  fetch(request: Request): Promise<Response>;
}

export function createAgentHost(options?: {
  statusFor?: (key: string, n: number) => number;
}): AgentHost;

declare const worker: { fetch(request: Request): Promise<Response> };
export default worker;
