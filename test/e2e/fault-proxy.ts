// A fault-injecting HTTP proxy for tests: forwards to a target, except the requests a rule answers
// itself (a 5xx without forwarding, or forwarding and then answering a 5xx, as a gateway timing out).
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

/** `forward`; `{status}`: answer it unforwarded; `{status, after: "forward"}`: forward, then answer. */
export type Fault = "forward" | { readonly status: number; readonly after?: "forward" };

export interface FaultProxy {
  readonly base: string;
  /** Every request that reached the proxy, in order. */
  readonly seen: ProxiedRequest[];
  rule: (request: ProxiedRequest) => Fault;
  close(): Promise<void>;
}

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const seen: ProxiedRequest = {
      method: request.method ?? "GET",
      path: request.url ?? "/",
      body: body.toString("utf8"),
    };
    proxy.seen.push(seen);
    const fault = proxy.rule(seen);
    // The shape exec-inbox and the runner give their own errors: a client reads the status and code.
    const fail = (status: number) => {
      response.writeHead(status, { "content-type": "application/problem+json" });
      response.end(
        JSON.stringify({
          type: "about:blank",
          title: "injected fault",
          status,
          code: "internal",
          detail: `fault proxy: ${status}`,
        }),
      );
    };
    if (fault !== "forward" && fault.after === undefined) return fail(fault.status);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "content-length") {
        headers.set(name, value);
      }
    }
    try {
      const upstream = await fetch(`${target}${seen.path}`, {
        method: seen.method,
        headers,
        body: seen.method === "GET" || seen.method === "HEAD" ? undefined : body,
      });
      const text = await upstream.text();
      if (fault !== "forward") return fail(fault.status);
      response.writeHead(upstream.status, {
        "content-type": upstream.headers.get("content-type") ?? "application/octet-stream",
      });
      response.end(text);
    } catch {
      fail(502);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const proxy: FaultProxy = {
    base: `http://127.0.0.1:${port}`,
    seen: [],
    rule: () => "forward",
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
