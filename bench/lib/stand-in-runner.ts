// A stand-in exec runner for the command-path benchmark: a loopback HTTP server in the bench's own
// process that speaks the reference runner's API (docs/runner.md) as far as the MCP endpoint uses
// it, with no shell behind it, so the figures are the service's cost and not a command's.
// `exec_command` answers at once that the command is still running, under a fresh session ID (the
// reference runner answers so once the yield passed); the callback arm is kept; the bench then has
// the runner post the command's completion to the armed URL, as the reference runner does when a
// command exits. Every call must carry the runner's bearer token.
import { createServer } from "node:http";
import { type Callback, postCompletion } from "@exec-inbox/client";
import { listenLocally } from "../../test/support/local-stack";

export interface StandInRunner {
  /** The base URL a session names as its runner. */
  readonly url: string;
  readonly token: string;
  /** Posts the completion of the command `cmd` to the callback the service armed for it. */
  complete(cmd: string, input: Parameters<typeof postCompletion>[1]): Promise<void>;
  close(): Promise<void>;
}

export async function startStandInRunner(token = "bench-runner-token"): Promise<StandInRunner> {
  const run = Date.now().toString(36);
  let started = 0;
  /** The session ID each command was started under (the bench names every command once). */
  const handles = new Map<string, string>();
  const armed = new Map<string, Callback>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const answer = (status: number, body: unknown) =>
        response
          .writeHead(status, { "content-type": "application/json" })
          .end(JSON.stringify(body));
      if (request.headers.authorization !== `Bearer ${token}`) {
        return answer(401, { code: "unauthorized", detail: "a runner token is required" });
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return answer(422, { code: "invalid_request", detail: "malformed JSON" });
      }
      const path = request.url ?? "";
      if (request.method === "POST" && path === "/v1/exec_command") {
        started += 1;
        const handle = `sr-${run}-${started}`;
        handles.set(String(body.cmd), handle);
        return answer(200, { session_id: handle, output: "", wall_time_ms: 0 });
      }
      const arm = /^\/v1\/processes\/([^/]+)\/callback$/.exec(path);
      if (request.method === "POST" && arm !== null) {
        armed.set(decodeURIComponent(arm[1] ?? ""), body as unknown as Callback);
        return answer(202, { armed: true });
      }
      return answer(404, { code: "not_found", detail: `no route ${request.method} ${path}` });
    });
  });
  server.keepAliveTimeout = 60_000;
  const port = await listenLocally(server);
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    async complete(cmd, input) {
      const handle = handles.get(cmd);
      const callback = handle === undefined ? undefined : armed.get(handle);
      if (handle === undefined || callback === undefined) {
        throw new Error(`no armed callback for the command "${cmd}"`);
      }
      handles.delete(cmd);
      armed.delete(handle);
      await postCompletion(callback, input);
    },
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
