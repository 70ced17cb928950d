// The benchmark peer: a Restate server (npm binary, loopback ports, temp data) and its service in a
// child process (bench/lib/restate-service.ts), over HTTP/1.1 (suspends at every wait) or HTTP/2.
import { type ChildProcess, fork, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "../../test/support/local-stack";
import type { ServiceMessage } from "./restate-service";

export interface RestatePeer {
  readonly ingress: string;
  /** Process ids of the server and the service: what serves a wake. */
  pids(): number[];
  /** Errors the SDK logged (Restate retries those invocations). */
  handlerErrors(): number;
  /** Starts one waiting handler for `key`; resolves with its awakeable id once it announced it. */
  start(key: string, input?: { delayMs?: number }): Promise<string>;
  /** Wall-clock ms when `key`'s handler resumed, and the value it got (once per key). */
  resumed(key: string): Promise<{ at: number; value: unknown }>;
  /** Resolves the awakeable over HTTP ingress: the status Restate answered. */
  resolve(awakeableId: string, value?: unknown): Promise<number>;
  /** SIGKILLs the server and starts it again on the same data. */
  restartServer(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRestatePeer(options: { http2?: boolean } = {}): Promise<RestatePeer> {
  const http2 = options.http2 ?? false;
  const announced = new Map<string, (id: string) => void>();
  const resumed = new Map<string, { at: number; value: unknown }>();
  let handlerErrors = 0;
  const service = fork("bench/lib/restate-service.ts", http2 ? ["--http2"] : [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const servicePort = new Promise<number>((ready) => {
    service.on("message", (message: ServiceMessage) => {
      if (message.type === "ready") ready(message.port);
      else if (message.type === "announce") announced.get(message.key)?.(message.id);
      else if (message.type === "resumed") {
        if (!resumed.has(message.key)) resumed.set(message.key, message);
      } else handlerErrors += 1;
    });
  });

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
  const admin = `http://127.0.0.1:${adminPort}`;
  const ingress = `http://127.0.0.1:${ingressPort}`;
  let server: ChildProcess;
  const startServer = async () => {
    server = spawn(
      "node_modules/@restatedev/restate-server-linux-x64/bin/restate-server",
      ["--config-file", join(dir, "restate.toml"), "--base-dir", join(dir, "data")],
      { stdio: "ignore" },
    );
    for (const deadline = Date.now() + 30_000; ; await sleep(100)) {
      try {
        if ((await fetch(`${admin}/health`)).ok && (await fetch(`${ingress}/restate/health`)).ok)
          return;
      } catch {
        // Not up yet.
      }
      if (Date.now() > deadline) throw new Error("restate-server did not start");
    }
  };
  await startServer();
  const registered = await fetch(`${admin}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: `http://127.0.0.1:${await servicePort}`, use_http_11: !http2 }),
  });
  if (!registered.ok)
    throw new Error(`registering the deployment: ${registered.status} ${await registered.text()}`);

  return {
    ingress,
    pids: () => [server.pid, service.pid].filter((pid): pid is number => pid !== undefined),
    handlerErrors: () => handlerErrors,
    async start(key, input) {
      const id = new Promise<string>((done) => announced.set(key, done));
      const sent = await fetch(`${ingress}/waiter/${key}/wait/send`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(input ?? {}),
      });
      await sent.arrayBuffer();
      if (!sent.ok) throw new Error(`invoke: ${sent.status}`);
      return id;
    },
    async resumed(key) {
      for (;;) {
        const seen = resumed.get(key);
        if (seen !== undefined) return seen;
        await sleep(1);
      }
    },
    async resolve(awakeableId, value = "done") {
      const response = await fetch(`${ingress}/restate/awakeables/${awakeableId}/resolve`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(value),
      });
      await response.arrayBuffer();
      return response.status;
    },
    async restartServer() {
      const exited = new Promise((done) => server.once("exit", done));
      server.kill("SIGKILL");
      await exited;
      await startServer();
    },
    async stop() {
      const exited = new Promise((done) => server.once("exit", done));
      server.kill("SIGTERM");
      await Promise.race([exited, sleep(3000)]);
      if (server.exitCode === null) server.kill("SIGKILL");
      service.kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
