// A stand-in for exec-inbox's heartbeat and completion routes (contract §9), for answers the real
// service cannot be made to give on demand: each answer is scripted per handle and attempt.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { freePort } from "../support/local-stack";

export type Route = "heartbeat" | "completion";

/** A status (with the route's usual body), a heartbeat answer, a reset socket, or no answer. */
export type Answer = number | { readonly status: 200; readonly cancel: boolean } | "reset" | "hang";

export interface Arrival {
  readonly route: Route;
  readonly handle: string;
  readonly path: string;
  readonly at: number;
  readonly body: any;
  /** What was answered; "hang" until the inbox closes. */
  readonly answer: Answer;
}

interface LivenessInboxOptions {
  /** The `heartbeat_timeout_ms` each heartbeat answer names. */
  readonly timeoutMs?: number | null;
  readonly heartbeat?: (handle: string, attempt: number) => Answer;
  readonly completion?: (handle: string, attempt: number) => Answer;
}

const ROUTE = /\/exec-jobs\/([^/]+)\/(heartbeat|completion)$/;

export async function startLivenessInbox(options: LivenessInboxOptions = {}) {
  const arrivals: Arrival[] = [];
  const hanging = new Set<ServerResponse>();
  const answerOf = (route: Route, handle: string, attempt: number): Answer => {
    const script = route === "heartbeat" ? options.heartbeat : options.completion;
    return script?.(handle, attempt) ?? (route === "heartbeat" ? 200 : 202);
  };
  const reply = (incoming: IncomingMessage, outgoing: ServerResponse, answer: Answer) => {
    if (answer === "reset") return incoming.socket.destroy();
    if (answer === "hang") {
      hanging.add(outgoing);
      outgoing.on("close", () => hanging.delete(outgoing));
      return;
    }
    const status = typeof answer === "number" ? answer : answer.status;
    const cancel = typeof answer === "object" && answer.cancel;
    const ok = incoming.url?.endsWith("/heartbeat")
      ? {
          status: "running",
          cancel_requested: cancel,
          heartbeat_timeout_ms: options.timeoutMs ?? null,
        }
      : { outcome: "accepted", generation: 1, disposition: "queued" };
    const body = status < 300 ? ok : { code: `scripted_${status}`, status };
    outgoing.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  const server = createServer((incoming, outgoing) => {
    let text = "";
    incoming.on("data", (chunk) => {
      text += chunk;
    });
    incoming.on("end", () => {
      const path = incoming.url ?? "/";
      const match = ROUTE.exec(path);
      if (match === null) return outgoing.writeHead(404).end();
      const route = match[2] as Route;
      const handle = decodeURIComponent(match[1] ?? "");
      const attempt =
        arrivals.filter((seen) => seen.route === route && seen.handle === handle).length + 1;
      const answer = answerOf(route, handle, attempt);
      const body = text === "" ? null : JSON.parse(text);
      arrivals.push({ route, handle, path, at: Date.now(), body, answer });
      reply(incoming, outgoing, answer);
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${port}`;
  const of = (handle: string, route?: Route) =>
    arrivals.filter(
      (seen) => seen.handle === handle && (route === undefined || seen.route === route),
    );
  return {
    base,
    arrivals,
    /** The completion URL a reservation would hand out for `handle`. */
    completionUrl: (handle: string) => `${base}/v1/sessions/s/exec-jobs/${handle}/completion`,
    heartbeatUrl: (handle: string) => `${base}/v1/sessions/s/exec-jobs/${handle}/heartbeat`,
    of,
    heartbeats: (handle: string) => of(handle, "heartbeat"),
    completions: (handle: string) => of(handle, "completion"),
    /** Heartbeat requests still waiting for an answer. */
    hangingCount: () => hanging.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const outgoing of hanging) outgoing.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The gaps between consecutive arrivals, in ms. */
export const gaps = (arrivals: readonly Arrival[]): number[] =>
  arrivals.slice(1).map((arrival, i) => arrival.at - (arrivals[i]?.at ?? arrival.at));
