// Test helpers that drive the Worker over HTTP inside workerd, and read the recording agent host.
// Setting a session up goes through the typed client; `call` stays for the tests that assert an
// answer's status, headers or problem body, or send what the client cannot (malformed requests).
// A test that uses more than a few of these imports the module whole: `import * as api`.

import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { vi } from "vitest";
import { ExecInboxClient, type Fetcher } from "../../client";
import type { Delivery } from "./agent-host.mjs";
import { type SendOptions, sendJson } from "./http-json";
import { AGENT_TOKEN } from "./secrets";

export { AGENT_TOKEN, SIGNING_SECRET } from "./secrets";

const BASE = "http://exec-inbox.test";

/** The Worker under test's own fetch: requests stay inside workerd. */
export const workerFetch: Fetcher = (request) => exports.default.fetch(request);

/** The typed client against the Worker under test, as the test agent (or `token`). */
export const client = (token: string = AGENT_TOKEN): ExecInboxClient =>
  new ExecInboxClient({ baseUrl: BASE, token, fetch: workerFetch });

let counter = 0;
/** One fresh id per test, so tests never share a session. */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}`;
}

export type { Answer } from "./http-json";

/** A request to the Worker under test, inside workerd; the token defaults to the test agent's. */
export const call = <T = any>(method: string, path: string, options: SendOptions = {}) =>
  sendJson<T>(workerFetch, `${BASE}${path}`, method, {
    ...options,
    token: options.token === undefined ? AGENT_TOKEN : options.token,
  });

export const hookUrl = (key: string): string => `http://hooks.test/hooks/${key}`;

export const createSession = (
  id: string,
  extra: Omit<Parameters<ExecInboxClient["createSession"]>[0], "id"> = {},
) => client().createSession({ id, resume_url: hookUrl(id), ...extra });

// Untyped for the tests, which read nullable parts of the view they just arranged.
export const view = (sid: string): Promise<any> => client().getSession(sid);

export const reserve = (sid: string, handle: string, command = `run ${handle}`) =>
  client().reserveJob(sid, { handle, command });

export async function registerRun(
  sid: string,
  body: Parameters<ExecInboxClient["registerRun"]>[1] = {},
): Promise<string> {
  return (await client().registerRun(sid, body)).run_id;
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

/** A session woken by h1's completion; its agent host answers the webhook with `hostAnswers`. */
export async function wokenSession(sid: string, hostAnswers: Parameters<typeof scriptHost>[1]) {
  await scriptHost(sid, hostAnswers);
  const { tokens } = await suspendedOn(sid, ["h1"]);
  await complete(sid, "h1", tokens.h1!, result(0, "x"));
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

/** The inbox's counts: pending, claimed, acked and the generation. */
export const inboxCounts = async (sid: string) =>
  (await call("GET", `/v1/sessions/${sid}/inbox`)).body;

/** Polls `check` until it passes: for what the object does after it answered (deliveries, alarms). */
export const until = (check: () => Promise<void>, timeout = 30_000) =>
  vi.waitFor(check, { timeout, interval: 100 });
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
