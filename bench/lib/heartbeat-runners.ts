// Runners for `npm run bench -- heartbeats`: many jobs heartbeating on a schedule, in a thread of their
// own, so their requests do not share an event loop with the client whose latency is measured.
import { Worker } from "node:worker_threads";
import type { Callback } from "@exec-inbox/client";

/**
 * The 64 runners' heartbeats, from a thread of their own: runners are other processes, and on one
 * event loop their 64 requests a second would delay the completion samples' own client. Each job
 * heartbeats once a second, the 64 spread evenly over the second, with a new 4 KiB tail each time.
 * A target without a token is a GET with no body: the control, a no-op route at the same rate.
 * Plain JavaScript, as a worker thread evaluates it (tsx does not compile it).
 */
const RUNNERS = `
const { parentPort, workerData } = require("node:worker_threads");
const { targets, durationMs } = workerData;
const start = performance.now() + 100;
const end = start + durationMs;
const latencies = [];
let refused = 0;
const sleep = (ms) => new Promise((done) => setTimeout(done, Math.max(0, ms)));
Promise.all(targets.map(async (target, j) => {
  for (let k = 0; ; k += 1) {
    const at = start + (j * 1000) / targets.length + k * 1000;
    if (at >= end) return;
    await sleep(at - performance.now());
    const body = JSON.stringify({
      output_tail: (String(k).padStart(8, "0") + "\\n").padEnd(4096, "x"),
      output_bytes_total: (k + 1) * 4096,
    });
    const t0 = performance.now();
    const response = await fetch(target.url, target.token === undefined ? {} : {
      method: "POST",
      headers: { authorization: "Bearer " + target.token, "content-type": "application/json" },
      body,
    });
    await response.arrayBuffer();
    latencies.push(performance.now() - t0);
    if (response.status !== 200) refused += 1;
  }
})).then(() => parentPort.postMessage({ latencies, refused }));
`;

export interface Target {
  readonly url: string;
  /** The job's callback token; none for the control's GET. */
  readonly token?: string;
}

/** Heartbeats of every job's callback (its `heartbeat_url` with its token). */
export const heartbeatTargets = (callbacks: readonly Callback[]): Target[] =>
  callbacks.map((callback) => ({ url: callback.heartbeat_url ?? "", token: callback.token }));

export function heartbeatsInThread(
  targets: readonly Target[],
  durationMs: number,
): Promise<{ latencies: number[]; refused: number }> {
  const thread = new Worker(RUNNERS, { eval: true, workerData: { targets, durationMs } });
  return new Promise((resolve, reject) => {
    thread.once("message", (result) => {
      resolve(result);
      void thread.terminate();
    });
    thread.once("error", reject);
  });
}
