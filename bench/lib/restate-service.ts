// The Restate peer's service, in its own process so its CPU can be read apart from the load
// generator's: a virtual object per session whose handler creates an awakeable and suspends on it.
// It reports to its parent over IPC; the parent owns the server and the measurements.
import { createServer } from "node:http";
import { createServer as createHttp2Server } from "node:http2";

export type ServiceMessage =
  | { type: "ready"; port: number }
  | { type: "announce"; key: string; id: string }
  | { type: "resumed"; key: string; at: number; value: unknown }
  | { type: "error" };

/** Wall-clock milliseconds with sub-ms precision, comparable across processes. */
const now = () => performance.timeOrigin + performance.now();
const tell = (message: ServiceMessage) => process.send?.(message);

async function main(): Promise<void> {
  const http2 = process.argv.includes("--http2");
  const restate = await import("@restatedev/restate-sdk");
  const waiter = restate.object({
    name: "waiter",
    handlers: {
      wait: async (
        ctx: import("@restatedev/restate-sdk").ObjectContext,
        input: { delayMs?: number } | undefined,
      ) => {
        const { id, promise } = ctx.awakeable<string>();
        await ctx.run("announce", () => {
          tell({ type: "announce", key: ctx.key, id });
        });
        // The semantics table: a result that arrives before the handler reaches its wait.
        if (input?.delayMs) await ctx.sleep(input.delayMs);
        const value = await promise;
        await ctx.run("resumed", () => {
          tell({ type: "resumed", key: ctx.key, at: now(), value });
        });
        return value;
      },
    },
    // Over HTTP/2 a handler is only suspended after this much inactivity (the default is 1 min).
    options: http2 ? { inactivityTimeout: 100 } : {},
  });
  const endpoint = restate
    .endpoint()
    .setLogger((meta) => {
      if (meta.level === "error") tell({ type: "error" });
    })
    .bind(waiter);
  const server = http2
    ? createHttp2Server(endpoint.http2Handler())
    : createServer(endpoint.http1Handler());
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  tell({ type: "ready", port: address.port });
}

void main();
