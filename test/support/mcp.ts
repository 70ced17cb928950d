// Raw MCP calls to the Worker under test, as a Streamable HTTP client sends them: one JSON-RPC
// message per POST with the Accept header the transport requires. What a test checks is its own.
import { type Answer, call } from "./api";

const ACCEPT = { accept: "application/json, text/event-stream" };
let nextId = 0;

/** One JSON-RPC request to the session's MCP endpoint. */
export function rpc(
  sid: string,
  method: string,
  params: Record<string, unknown> = {},
  options: { token?: string | null; protocolVersion?: string } = {},
): Promise<Answer> {
  nextId += 1;
  return call("POST", `/v1/sessions/${sid}/mcp`, {
    body: { jsonrpc: "2.0", id: nextId, method, params },
    headers: {
      ...ACCEPT,
      "mcp-protocol-version": options.protocolVersion ?? "2025-11-25",
    },
    ...(options.token === undefined ? {} : { token: options.token }),
  });
}

/** Any body to the endpoint, with the transport's headers: for what no client would send. */
export const postMcp = (sid: string, body: unknown, headers: Record<string, string> = {}) =>
  call("POST", `/v1/sessions/${sid}/mcp`, { body, headers: { ...ACCEPT, ...headers } });

/** `tools/call` of `name`: the JSON-RPC answer's `result` (a CallToolResult), or its error. */
export async function callTool(sid: string, name: string, args: Record<string, unknown>) {
  const answer = await rpc(sid, "tools/call", { name, arguments: args });
  if (answer.status !== 200) throw new Error(`tools/call answered ${answer.status}`);
  return answer.body.result ?? answer.body.error;
}

/** The stand-in runner's jobs of a workspace (a session id), oldest first. */
export async function runnerJobs(workspace: string): Promise<any[]> {
  const answer = await fetch(`http://runner.test/_jobs?workspace=${workspace}`);
  return (await answer.json<{ jobs: any[] }>()).jobs;
}

/** Ends a stand-in command with `result`; answers the callback the service armed for it. */
export async function finishOnRunner(handle: string, result: Record<string, unknown>) {
  const answer = await fetch(`http://runner.test/_finish/${handle}`, {
    method: "POST",
    body: JSON.stringify(result),
  });
  return (await answer.json<{ callback: any }>()).callback;
}
