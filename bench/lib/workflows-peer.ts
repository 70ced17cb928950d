// The Cloudflare Workflows peer (bench/workflows-peer/) served on workerd through Miniflare's API:
// one instance per session waiting in step.waitForEvent, woken by instance.sendEvent.
import { buildWorker, type ServedWorker, serveWorker } from "./miniflare-stack";

export interface WorkflowsPeer {
  readonly base: string;
  readonly served: ServedWorker;
  /** Creates an instance; `via` is the base URL to call (the entry worker's by default). */
  start(
    id: string,
    params: { notify: string; delayMs?: number; secondWaitMs?: number },
    via?: string,
  ): Promise<number>;
  /** Sends the event; the status the peer answered (202 accepted, 500 with the error). */
  send(id: string, payload: unknown, via?: string): Promise<{ status: number; body: unknown }>;
  status(id: string): Promise<{ status: string; output?: unknown; error?: unknown }>;
  restart(id: string): Promise<number>;
  stop(): Promise<void>;
}

export function buildWorkflowsPeer(): string {
  return buildWorker("bench/workflows-peer", ".bench/workflows-peer");
}

export async function startWorkflowsPeer(
  scriptPath: string,
  stateDir: string,
  options: { inspectorPort?: number } = {},
): Promise<WorkflowsPeer> {
  const served = await serveWorker({
    ...options,
    modules: true,
    scriptPath,
    compatibilityDate: "2026-11-17",
    workflows: { WAITER: { name: "waiter", className: "Waiter" } },
    // Miniflare 5 keeps every resource under one root (`do/`, `d1/`, `r2/`, `workflows/` in it).
    resourcePersistencePath: stateDir,
  });
  const base = served.base;
  const call = async (path: string, body?: unknown, via = base) => {
    const response = await fetch(`${via}${path}`, {
      method: body === undefined ? "GET" : "POST",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === "" ? null : (JSON.parse(text) as unknown) };
  };
  return {
    base,
    served,
    start: async (id, params, via) => (await call(`/start?id=${id}`, params, via)).status,
    send: (id, payload, via) => call(`/send?id=${id}`, payload, via),
    status: async (id) => (await call(`/status?id=${id}`)).body as { status: string },
    restart: async (id) => (await call(`/restart?id=${id}`, {})).status,
    stop: () => served.stop(),
  };
}
