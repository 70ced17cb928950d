// Reads the V8 heap of the Worker's isolate under `wrangler dev` through its DevTools port: the
// memory Cloudflare caps at 128 MB per isolate, which process RSS (allocator, SQLite cache,
// wrangler's proxy) does not isolate. How often to sample it is left to the caller.
import { devtools } from "./devtools";

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
export async function isolateHeap(
  inspectorPort: number,
  choose?: Parameters<typeof devtools>[1],
): Promise<HeapUsage> {
  const { send, close } = await devtools(inspectorPort, choose);
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
    close();
  }
}
