// Reads the V8 heap of the Worker's isolate under `wrangler dev` through its DevTools port: the
// memory Cloudflare caps at 128 MB per isolate, which process RSS (allocator, SQLite cache,
// wrangler's proxy) does not isolate. How often to sample it is left to the caller.
import WebSocket from "ws";

export interface HeapUsage {
  /** MiB of live JavaScript objects (read after the full GC a heap snapshot makes). */
  readonly usedMiB: number;
  /** MiB V8 holds for the heap. */
  readonly totalMiB: number;
  /** MiB of ArrayBuffer backing stores (request and response bodies live there). */
  readonly backingMiB: number;
}

/**
 * One DevTools session: a heap snapshot (its chunks discarded) forces a full GC — workerd does not
 * answer HeapProfiler.collectGarbage — then Runtime.getHeapUsage reads what is live.
 */
export async function isolateHeap(inspectorPort: number): Promise<HeapUsage> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as Array<{
    webSocketDebuggerUrl?: string;
  }>;
  const url = targets.find((target) => target.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
  if (url === undefined) throw new Error("no inspectable isolate");
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let nextId = 0;
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      nextId += 1;
      const id = nextId;
      const onMessage = (data: WebSocket.RawData) => {
        const message = JSON.parse(String(data)) as {
          id?: number;
          result?: Record<string, unknown>;
          error?: { message: string };
        };
        if (message.id !== id) return;
        socket.off("message", onMessage);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message.result ?? {});
      };
      socket.on("message", onMessage);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    await send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    const usage = await send("Runtime.getHeapUsage");
    const mib = (bytes: unknown) => Math.round((Number(bytes ?? 0) / 1024 / 1024) * 10) / 10;
    return {
      usedMiB: mib(usage.usedSize),
      totalMiB: mib(usage.totalSize),
      backingMiB: mib(usage.backingStorageSize),
    };
  } finally {
    socket.close();
  }
}
