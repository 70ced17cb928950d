// Test helpers that drive the Worker over HTTP inside workerd, and read the recording agent host.

import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";

import type { Delivery } from "../../scripts/lib/agent-host.mjs";
import { type SendOptions, sendJson } from "../../scripts/lib/http-json";
import { AGENT_TOKEN } from "./secrets";

export { AGENT_TOKEN, SIGNING_SECRET } from "./secrets";

const BASE = "http://exec-inbox.test";

let counter = 0;
/** One fresh id per test, so tests never share a session. */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}`;
}

export type { Answer } from "../../scripts/lib/http-json";

/** A request to the Worker under test, inside workerd; the token defaults to the test agent's. */
export const call = <T = any>(method: string, path: string, options: SendOptions = {}) =>
  sendJson<T>((request) => exports.default.fetch(request), `${BASE}${path}`, method, {
    ...options,
    token: options.token === undefined ? AGENT_TOKEN : options.token,
  });

export const hookUrl = (key: string): string => `http://hooks.test/hooks/${key}`;

export async function createSession(id: string, extra: Record<string, unknown> = {}) {
  const answer = await call("POST", "/v1/sessions", {
    body: { id, resume_url: hookUrl(id), ...extra },
  });
  if (answer.status !== 201) throw new Error(`create failed: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

export const view = async (sid: string) => (await call("GET", `/v1/sessions/${sid}`)).body;

export async function reserve(sid: string, handle: string, command = `run ${handle}`) {
  const answer = await call("POST", `/v1/sessions/${sid}/exec-jobs`, { body: { handle, command } });
  if (answer.status !== 201 && answer.status !== 200)
    throw new Error(`reserve failed: ${JSON.stringify(answer.body)}`);
  return answer.body as { job: any; callback: { url: string; token: string } };
}

export async function registerRun(
  sid: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const answer = await call("POST", `/v1/sessions/${sid}/runs`, { body });
  if (answer.status !== 201) throw new Error(`register failed: ${JSON.stringify(answer.body)}`);
  return answer.body.run_id;
}

export async function suspend(
  sid: string,
  runId: string,
  waitingFor: string[],
  extra: Record<string, unknown> = {},
) {
  return call("POST", `/v1/sessions/${sid}/runs/${runId}/suspend`, {
    body: { waiting_for: waitingFor, ...extra },
  });
}

export const result = (exitCode: number, output: string, extra: Record<string, unknown> = {}) => ({
  status: "completed",
  exit_code: exitCode,
  output,
  ...extra,
});

export async function complete(sid: string, handle: string, token: string, body: unknown) {
  return call("POST", `/v1/sessions/${sid}/exec-jobs/${handle}/completion`, { body, token });
}

/** A session suspended on the given handles, with their callback tokens. */
export async function suspendedOn(
  sid: string,
  handles: string[],
  extra: Record<string, unknown> = {},
) {
  await createSession(sid);
  const tokens: Record<string, string> = {};
  for (const handle of handles) tokens[handle] = (await reserve(sid, handle)).callback.token;
  const runId = await registerRun(sid);
  const suspended = await suspend(sid, runId, handles, extra);
  if (suspended.status !== 200)
    throw new Error(`suspend failed: ${JSON.stringify(suspended.body)}`);
  return { runId, tokens };
}

export const stubOf = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));

export const fireAlarm = (sid: string): Promise<boolean> => runDurableObjectAlarm(stubOf(sid));

export async function deliveries(key: string): Promise<Delivery[]> {
  const response = await env.AGENT_HOST.fetch(`http://agent-host/_control/${key}`);
  return ((await response.json()) as { deliveries: Delivery[] }).deliveries;
}

/** Scripts the agent host's answers for a hook key: HTTP statuses in order, 0 = network failure. */
export async function scriptHost(
  key: string,
  statuses: Array<number | { status: number; delayMs: number }>,
): Promise<void> {
  await env.AGENT_HOST.fetch(`http://agent-host/_control/${key}`, {
    method: "PUT",
    body: JSON.stringify({ statuses }),
  });
}

export const claim = (sid: string, body: Record<string, unknown> = {}) =>
  call("POST", `/v1/sessions/${sid}/inbox/claim`, { body });
