// The one raw HTTP helper of tests and scripts, beside the typed client (client/): any method,
// path and body (malformed ones included), with a bearer token, answered as status, headers and
// parsed JSON (or text). Tests use it (test/support/api.ts `call`) where they assert an answer's
// status, headers or problem body, or send what the client would never send. Which fetch carries it
// is the caller's: the network, or the Worker itself inside the workers pool.

import type { Fetcher } from "@exec-inbox/client";

export type { Fetcher };

export interface Answer<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

export interface SendOptions {
  /** JSON-encoded, with `content-type: application/json` unless `headers` names one. */
  readonly body?: unknown;
  /** Sent as it is, for bodies that are not JSON. */
  readonly raw?: RequestInit["body"];
  /** `null` sends no Authorization header. */
  readonly token?: string | null;
  readonly headers?: Record<string, string>;
}

export async function sendJson<T = any>(
  fetcher: Fetcher,
  url: string,
  method: string,
  options: SendOptions = {},
): Promise<Answer<T>> {
  const headers = new Headers(options.headers);
  if (options.token !== undefined && options.token !== null) {
    headers.set("authorization", `Bearer ${options.token}`);
  }
  let body: RequestInit["body"] = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const response = await fetcher(new Request(url, { method, headers, body }));
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // Non-JSON answers stay text.
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}
