// Helpers for runner tests: a scripted flaky proxy in front of exec-inbox, and the runner as a process.
import { createServer, type Server } from "node:http";
import { freePort, spawnCollecting, waitForHealthy } from "../../scripts/lib/local-stack";

export const RUNNER_TOKEN = "test-runner-token";

export interface ProxyAttempt {
  readonly path: string;
  readonly at: number;
  readonly status: number;
}

/** Answers the scripted failures first (status, optional Retry-After), then forwards to `target`. */
export async function startFlakyProxy(target: string) {
  const script: Array<{ status: number; retryAfter?: string }> = [];
  const attempts: ProxyAttempt[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", async () => {
      const path = incoming.url ?? "/";
      const failure = script.shift();
      if (failure !== undefined) {
        attempts.push({ path, at: Date.now(), status: failure.status });
        const headers: Record<string, string> = { "content-type": "application/problem+json" };
        if (failure.retryAfter !== undefined) headers["retry-after"] = failure.retryAfter;
        outgoing.writeHead(failure.status, headers).end(JSON.stringify({ code: "scripted" }));
        return;
      }
      const response = await fetch(`${target}${path}`, {
        method: incoming.method,
        headers: {
          authorization: incoming.headers.authorization ?? "",
          "content-type": "application/json",
        },
        body: Buffer.concat(chunks),
      });
      attempts.push({ path, at: Date.now(), status: response.status });
      outgoing.writeHead(response.status, {
        "content-type": response.headers.get("content-type") ?? "",
      });
      outgoing.end(await response.text());
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${port}`,
    script,
    attempts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface RunnerProcess {
  readonly base: string;
  readonly log: () => string;
  kill(): Promise<void>;
}

/** `npm run runner` as its own process group, so SIGKILL takes its children down with it. */
export async function startRunnerProcess(stateDir: string): Promise<RunnerProcess> {
  const port = await freePort();
  const { child, output } = spawnCollecting("node_modules/.bin/tsx", ["runner/main.ts"], {
    RUNNER_PORT: String(port),
    RUNNER_STATE_DIR: stateDir,
    RUNNER_TOKENS: RUNNER_TOKEN,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForHealthy(base, child, output, 20_000);
  return {
    base,
    log: output,
    async kill() {
      if (child.pid === undefined || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid, "SIGKILL");
      await exited;
    },
  };
}

export async function runnerCall(base: string, path: string, body: unknown) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${RUNNER_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}
