// The benchmark's agent host: a loopback HTTP server that records when each resume arrives, keyed
// by the session (`session_id` of an exec-inbox webhook, `id` of the Workflows peer's report).
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { listenLocally } from "../../test/support/local-stack";

export interface Arrival {
  /** Wall-clock ms with sub-ms precision (comparable across processes). */
  readonly at: number;
  readonly body: Record<string, unknown>;
  /** What the host answered: 204, or the status `failNext` scripted. */
  readonly status: number;
}

export interface ArrivalsHost {
  readonly url: string;
  /** Every delivery for `key`, failed ones included. */
  arrivals(key: string): readonly Arrival[];
  /** The first arrival answered 204 for `key`, waiting up to `timeoutMs`; undefined if none came. */
  first(key: string, timeoutMs?: number): Promise<Arrival | undefined>;
  /** Answers the next `count` deliveries with `status` instead of 204. */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
}

export const wallNow = (): number => performance.timeOrigin + performance.now();

export async function startArrivalsHost(): Promise<ArrivalsHost> {
  const byKey = new Map<string, Arrival[]>();
  let failing = 0;
  let failStatus = 503;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const at = wallNow();
      const status = failing > 0 ? failStatus : 204;
      if (failing > 0) failing -= 1;
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      const key = String(body.session_id ?? body.id);
      const list = byKey.get(key) ?? [];
      list.push({ at, body, status });
      byKey.set(key, list);
      response.writeHead(status).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  const port = await listenLocally(server);
  return {
    url: `http://127.0.0.1:${port}/resume`,
    arrivals: (key) => byKey.get(key) ?? [],
    async first(key, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const seen = byKey.get(key)?.find((arrival) => arrival.status === 204);
        if (seen !== undefined || Date.now() > deadline) return seen;
        await sleep(1);
      }
    },
    failNext(count, status = 503) {
      failing = count;
      failStatus = status;
    },
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
