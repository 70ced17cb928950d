// A TCP proxy that misbehaves on purpose, for the nemesis run: each new connection is forwarded,
// delayed, reset at once, or left half-open (accepted and read, never forwarded or answered).
// What counts as a fault and how often is the caller's (`faultFor`); the bytes are never changed.
import { connect, createServer, type Server, type Socket } from "node:net";

export type ConnectionFault = "forward" | "delay" | "reset" | "half_open";

export interface TcpNemesis {
  readonly port: number;
  /** Connections by what was done to them. */
  readonly counts: Record<ConnectionFault, number>;
  close(): Promise<void>;
}

export async function startTcpNemesis(options: {
  readonly port: number;
  readonly targetPort: () => number;
  readonly faultFor: () => ConnectionFault;
  readonly delayMs: () => number;
}): Promise<TcpNemesis> {
  const counts: Record<ConnectionFault, number> = { forward: 0, delay: 0, reset: 0, half_open: 0 };
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const pipeTo = (client: Socket) => {
    const upstream = connect(options.targetPort(), "127.0.0.1");
    track(upstream);
    client.pipe(upstream).pipe(client);
    upstream.on("close", () => client.destroy());
    client.on("close", () => upstream.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    const fault = options.faultFor();
    counts[fault] += 1;
    switch (fault) {
      case "forward":
        pipeTo(client);
        return;
      case "delay":
        client.pause();
        setTimeout(() => {
          if (client.destroyed) return;
          pipeTo(client);
          client.resume();
        }, options.delayMs());
        return;
      case "reset":
        client.resetAndDestroy();
        return;
      case "half_open":
        // Read and drop whatever comes: the caller's own timeout is what ends it.
        client.on("data", () => undefined);
        return;
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port, "127.0.0.1", resolve));
  return {
    port: options.port,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
