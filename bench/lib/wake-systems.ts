// The systems the benchmark wakes, behind one shape: make N sessions wait, send one the result,
// see it resume. exec-inbox (a completion → its signed webhook at the host), Restate (an awakeable
// resolved over ingress → the handler resumed), Workflows (sendEvent → the waiting step resumed).
import { setTimeout as sleep } from "node:timers/promises";
import { type Callback, postCompletion } from "@exec-inbox/client";
import { WAKE_SETTLE_MS } from "../../src/domain/index-entry";
import { agentClient } from "../../test/support/local-stack";
import type { ArrivalsHost } from "./arrivals-host";
import type { RestatePeer } from "./restate-peer";
import type { WorkflowsPeer } from "./workflows-peer";

/** Calls that do nothing, or the least a durable system must, on one runtime: its floors. */
export interface FloorSystem {
  readonly name: string;
  /** The processes that serve it (their CPU and memory are its cost). */
  pids(): readonly number[];
  /** A route that does nothing, on the same runtime: the floor. */
  readonly noop?: () => Promise<void>;
  /** One round trip to an object that does nothing. */
  readonly noopObject?: () => Promise<void>;
  /** One round trip to an object that commits one SQLite row before answering. */
  readonly noopWrite?: () => Promise<void>;
}

export interface WakeSystem extends FloorSystem {
  /** Makes `count` sessions wait; returns their keys once they wait. */
  prepare(label: string, count: number): Promise<string[]>;
  /** Sends `key` its result; settles when the system accepted it. */
  wake(key: string): Promise<void>;
  /** Wall-clock ms at which `key` resumed. */
  resumedAt(key: string): Promise<number>;
  /**
   * How long after a resume the system still works on that wake (exec-inbox: the index entry a
   * claim did not take within its settle window): the bench waits it out, so that work is counted
   * in the wakes' CPU and does not fall on the next phase.
   */
  readonly deferredMs?: number;
}

/** Runs `work` over `items` with `concurrency` in flight. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) await work(items[i] as T, i);
    }),
  );
}

async function drained(response: Response): Promise<Response> {
  await response.arrayBuffer();
  return response;
}

export function execInboxSystem(
  name: string,
  base: string,
  host: ArrivalsHost,
  pids: () => readonly number[],
): WakeSystem & { callbacks: Map<string, Callback> } {
  const callbacks = new Map<string, Callback>();
  const inbox = agentClient(base);
  const run = Date.now().toString(36);
  const get = async (path: string) => {
    const response = await drained(await fetch(`${base}${path}`));
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
  };
  return {
    name,
    callbacks,
    pids,
    // A woken session nobody claims has its index entry written when the settle window ends.
    deferredMs: WAKE_SETTLE_MS + 500,
    noop: () => get("/healthz"),
    noopObject: () => get("/healthz/object"),
    async prepare(label, count) {
      const keys = Array.from({ length: count }, (_, i) => `b-${run}-${label}-${i}`);
      await pool(keys, 8, async (sid) => {
        await inbox.createSession({ id: sid, resume_url: host.url });
        const reserved = await inbox.reserveJob(sid, { handle: "j0", command: "make test" });
        callbacks.set(sid, reserved.callback);
        const { run_id: runId } = await inbox.registerRun(sid);
        await inbox.suspend(sid, runId, { waiting_for: ["j0"] });
      });
      return keys;
    },
    async wake(sid) {
      const callback = callbacks.get(sid);
      if (callback === undefined) throw new Error(`no callback for ${sid}`);
      await postCompletion(callback, { status: "completed", exit_code: 0, output: "ok\n" });
    },
    async resumedAt(sid) {
      const arrival = await host.first(sid);
      if (arrival === undefined) throw new Error(`no resume for ${sid}`);
      return arrival.at;
    },
  };
}

export function restateSystem(name: string, peer: RestatePeer, http2: boolean): WakeSystem {
  const awakeables = new Map<string, string>();
  const run = Date.now().toString(36);
  return {
    name,
    pids: () => peer.pids(),
    async prepare(label, count) {
      const keys = Array.from({ length: count }, (_, i) => `b-${run}-${label}-${i}`);
      await pool(keys, 8, async (key) => {
        awakeables.set(key, await peer.start(key));
      });
      // HTTP/1.1 suspends at the wait; HTTP/2 after the 100 ms inactivity timeout.
      await sleep(http2 ? 500 : 300);
      return keys;
    },
    async wake(key) {
      const status = await peer.resolve(awakeables.get(key) ?? "");
      if (status < 200 || status >= 300) throw new Error(`resolve: ${status}`);
    },
    async resumedAt(key) {
      return (await peer.resumed(key)).at;
    },
  };
}

export function workflowsSystem(
  name: string,
  peer: WorkflowsPeer,
  base: string,
  host: ArrivalsHost,
): WakeSystem {
  const run = Date.now().toString(36);
  return {
    name,
    pids: () => peer.served.pids,
    noop: async () => {
      const response = await drained(await fetch(`${base}/noop`));
      if (!response.ok) throw new Error(`noop: ${response.status}`);
    },
    async prepare(label, count) {
      const keys = Array.from({ length: count }, (_, i) => `b-${run}-${label}-${i}`);
      await pool(keys, 8, async (id) => {
        const status = await peer.start(id, { notify: host.url }, base);
        if (status !== 201) throw new Error(`create: ${status}`);
      });
      // Let every instance reach its waitForEvent (a sooner event would be buffered, not waited for).
      await sleep(500);
      return keys;
    },
    async wake(id) {
      const sent = await peer.send(id, { status: "completed" }, base);
      if (sent.status !== 202) throw new Error(`sendEvent: ${sent.status} ${JSON.stringify(sent)}`);
    },
    async resumedAt(id) {
      const arrival = await host.first(id);
      if (arrival === undefined) throw new Error(`no resume for ${id}`);
      return arrival.at;
    },
  };
}

/** bench/floor-worker's routes; writes go to 16 objects in turn, as 16 sessions would. */
export function floorSystem(
  name: string,
  base: string,
  pids: () => readonly number[],
): FloorSystem {
  let turn = 0;
  const get = async (path: string) => {
    const response = await drained(await fetch(`${base}${path}`));
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
  };
  return {
    name,
    pids,
    noop: () => get("/noop"),
    noopObject: () => get("/object"),
    noopWrite: () => {
      turn += 1;
      return get(`/write?o=floor-${turn % 16}`);
    },
  };
}

/**
 * The floor Worker's `/wake` as a system: the least a durable wake does on this runtime (one row
 * and the alarm committed, the 202, the POST to the host, the outcome committed), so that the
 * bench can say what exec-inbox's wake costs above it. Preparing a key makes its object and its
 * table (one row), as a waiting session's object exists before its wake.
 */
export function durableWakeFloor(
  name: string,
  base: string,
  host: ArrivalsHost,
  pids: () => readonly number[],
): WakeSystem {
  const run = Date.now().toString(36);
  return {
    name,
    pids,
    async prepare(label, count) {
      const keys = Array.from({ length: count }, (_, i) => `f-${run}-${label}-${i}`);
      await pool(keys, 8, async (key) => {
        const response = await drained(await fetch(`${base}/write?o=${key}`));
        if (!response.ok) throw new Error(`/write: ${response.status}`);
      });
      return keys;
    },
    async wake(key) {
      const response = await drained(
        await fetch(`${base}/wake?o=${key}&to=${encodeURIComponent(host.url)}`),
      );
      if (response.status !== 202) throw new Error(`/wake: ${response.status}`);
    },
    async resumedAt(key) {
      const arrival = await host.first(key);
      if (arrival === undefined) throw new Error(`no resume for ${key}`);
      return arrival.at;
    },
  };
}
