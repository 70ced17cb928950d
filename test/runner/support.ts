// Helpers for runner tests: a scripted flaky proxy in front of exec-inbox, and runner calls.
// The runner as a real process is in runner-process.ts.
import { createServer, type Server } from "node:http";
import { freePort } from "../support/local-stack";
import { callRunner } from "../support/runner-client";

import { RUNNER_TOKEN } from "./runner-process";

export { RUNNER_TOKEN, type RunnerProcess, startRunnerProcess } from "./runner-process";

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

export const runnerCall = (base: string, path: string, body: unknown) =>
  callRunner(base, RUNNER_TOKEN, path, body);

export async function runnerPoll(base: string, sessionId: string) {
  return runnerCall(base, "/v1/write_stdin", { session_id: sessionId, yield_time_ms: 250 });
}

export interface InboxAttempt {
  readonly path: string;
  readonly status: number;
  readonly body: any;
}

/** A raw answer body, for what a proxy in front of exec-inbox might send instead of JSON. */
export interface RawReply {
  readonly contentType: string;
  readonly text: string;
}

/**
 * A stand-in for exec-inbox's completion route, for answers the real one cannot be made to give
 * on demand (404, 422, 401 for a valid token): `answer` picks each status, 202 `accepted` if none;
 * `reply`, when it gives one, replaces the JSON body.
 */
export async function startFakeInbox(
  answer: (attempt: number, path: string) => number = () => 202,
  reply: (status: number) => RawReply | undefined = () => undefined,
) {
  const attempts: InboxAttempt[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    let text = "";
    incoming.on("data", (chunk) => {
      text += chunk;
    });
    incoming.on("end", () => {
      const path = incoming.url ?? "/";
      const status = answer(attempts.filter((a) => a.path === path).length + 1, path);
      attempts.push({ path, status, body: JSON.parse(text) });
      const raw = reply(status);
      if (raw !== undefined) {
        outgoing.writeHead(status, { "content-type": raw.contentType }).end(raw.text);
        return;
      }
      const json =
        status < 300 ? { outcome: "accepted", generation: 1 } : { code: `scripted_${status}` };
      outgoing.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    /** A callback URL of this inbox for one job. */
    url: (handle: string) =>
      `http://127.0.0.1:${port}/v1/sessions/s/exec-jobs/${handle}/completion`,
    attempts,
    of: (handle: string) => attempts.filter((a) => a.path.includes(`/exec-jobs/${handle}/`)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Polls an async condition (local-stack's waitFor takes a synchronous one). */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
