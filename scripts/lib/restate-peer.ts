// The benchmark peer: a Restate server (npm binary, loopback ports, temp data) and a virtual object
// per session whose handler creates an awakeable and suspends until it is resolved.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "./local-stack";

// @restatedev/restate-sdk calls Promise.withResolvers (Node 22+); without it every invocation fails.
const promiseStatics = Promise as unknown as { withResolvers?: () => unknown };
promiseStatics.withResolvers ??= () => {
  let resolve: unknown;
  let reject: unknown;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

export interface RestatePeer {
  readonly ingress: string;
  /** Errors the SDK logged (Restate retries those invocations). */
  handlerErrors(): number;
  /** Starts one waiting handler for `key`; resolves with its awakeable id once it is suspended. */
  start(key: string): Promise<string>;
  /** Resolves the awakeable over HTTP ingress; settles when the handler has resumed. */
  resolve(
    key: string,
    awakeableId: string,
  ): Promise<{ accepted: number; resumed: Promise<number> }>;
  stop(): Promise<void>;
}

export async function startRestatePeer(): Promise<RestatePeer> {
  const restate = await import("@restatedev/restate-sdk");
  const announced = new Map<string, (id: string) => void>();
  const resumed = new Map<string, (at: number) => void>();

  const waiter = restate.object({
    name: "waiter",
    handlers: {
      wait: async (ctx: import("@restatedev/restate-sdk").ObjectContext) => {
        const { id, promise } = ctx.awakeable<string>();
        await ctx.run("announce", () => {
          announced.get(ctx.key)?.(id);
        });
        const value = await promise;
        await ctx.run("resumed", () => {
          resumed.get(ctx.key)?.(performance.now());
        });
        return value;
      },
    },
  });

  // HTTP/1.1: the handler suspends at every await, as a suspended agent session does.
  const servicePort = await freePort();
  let handlerErrors = 0;
  const endpoint = restate
    .endpoint()
    .setLogger((meta) => {
      if (meta.level === "error") handlerErrors += 1;
    })
    .bind(waiter);
  const service = createServer(endpoint.http1Handler());
  await new Promise<void>((done) => service.listen(servicePort, "127.0.0.1", done));

  const dir = mkdtempSync(join(tmpdir(), "restate-peer-"));
  const [fabric, ingressPort, adminPort] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(
    join(dir, "restate.toml"),
    [
      'listen-mode = "tcp"',
      `bind-address = "127.0.0.1:${fabric}"`,
      `advertised-address = "http://127.0.0.1:${fabric}"`,
      "[ingress]",
      `bind-address = "127.0.0.1:${ingressPort}"`,
      "[admin]",
      `bind-address = "127.0.0.1:${adminPort}"`,
    ].join("\n"),
  );
  const server: ChildProcess = spawn(
    "node_modules/@restatedev/restate-server-linux-x64/bin/restate-server",
    ["--config-file", join(dir, "restate.toml"), "--base-dir", join(dir, "data")],
    { stdio: "ignore" },
  );
  const admin = `http://127.0.0.1:${adminPort}`;
  const ingress = `http://127.0.0.1:${ingressPort}`;
  for (const deadline = Date.now() + 30_000; ; await sleep(200)) {
    try {
      if ((await fetch(`${admin}/health`)).ok && (await fetch(`${ingress}/restate/health`)).ok)
        break;
    } catch {
      // Not up yet.
    }
    if (Date.now() > deadline) throw new Error("restate-server did not start");
  }
  const registered = await fetch(`${admin}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: `http://127.0.0.1:${servicePort}`, use_http_11: true }),
  });
  if (!registered.ok)
    throw new Error(`registering the deployment: ${registered.status} ${await registered.text()}`);

  return {
    ingress,
    handlerErrors: () => handlerErrors,
    async start(key) {
      const id = new Promise<string>((done) => announced.set(key, done));
      const sent = await fetch(`${ingress}/waiter/${key}/wait/send`, { method: "POST" });
      if (!sent.ok) throw new Error(`invoke: ${sent.status}`);
      return id;
    },
    async resolve(key, awakeableId) {
      const done = new Promise<number>((finish) => resumed.set(key, finish));
      const response = await fetch(`${ingress}/restate/awakeables/${awakeableId}/resolve`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify("done"),
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`resolve: ${response.status}`);
      return { accepted: performance.now(), resumed: done };
    },
    async stop() {
      server.kill("SIGTERM");
      await sleep(500);
      service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
