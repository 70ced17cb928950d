// One DevTools protocol session with an isolate of workerd, through its inspector port: the heap
// reading of the stress run and the CPU profile of `npm run bench -- profile` both speak it.
import WebSocket from "ws";

interface Target {
  readonly id?: string;
  readonly webSocketDebuggerUrl?: string;
}

export interface DevTools {
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): void;
}

/** Opens a session with the first target `choose` accepts (by default the first inspectable one). */
export async function devtools(
  port: number,
  choose: (target: Target) => boolean = () => true,
): Promise<DevTools> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as Target[];
  const url = targets.find(
    (target) => target.webSocketDebuggerUrl && choose(target),
  )?.webSocketDebuggerUrl;
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
  return { send, close: () => socket.close() };
}
