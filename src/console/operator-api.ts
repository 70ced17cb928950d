// The console's only way to the data: the Worker's own /v1/ops routes, called in-process with the
// signed-in operator's token, so the console and the API share one source of truth.
// Rendering what comes back, and wording failures for a person, is left to the pages.
import type { Hono } from "hono";
import type { AppEnv } from "../http/context";
import type { ConsoleContext } from "./operator-cookie";

export type ApiAnswer<T> =
  | { readonly ok: true; readonly status: number; readonly value: T }
  | { readonly ok: false; readonly status: number; readonly message: string };

/** Calls one /v1/ops route as the operator; a problem+json answer becomes a readable message. */
export async function operatorCall<T>(
  app: Hono<AppEnv>,
  c: ConsoleContext,
  token: string,
  method: "GET" | "POST" | "DELETE",
  path: string,
): Promise<ApiAnswer<T>> {
  const request = new Request(new URL(path, c.req.url), {
    method,
    headers: { authorization: `Bearer ${token}`, accept: "application/json" },
  });
  let response: Response;
  try {
    response = await app.fetch(request, c.env, executionContextOf(c));
  } catch (error) {
    return { ok: false, status: 500, message: `the API could not be reached (${name(error)})` };
  }
  const text = await response.text();
  if (response.ok) {
    try {
      const value = (text === "" ? null : JSON.parse(text)) as T;
      return { ok: true, status: response.status, value };
    } catch {
      return {
        ok: false,
        status: 502,
        message: `The API answered ${response.status} without JSON`,
      };
    }
  }
  return { ok: false, status: response.status, message: problemMessage(response.status, text) };
}

/**
 * A full output from its /v1/ops route, as bytes the browser shows as text: streamed through,
 * never read here. A refusal comes back as the API's problem, for the page to word.
 */
export async function operatorStream(
  app: Hono<AppEnv>,
  c: ConsoleContext,
  token: string,
  path: string,
): Promise<Response> {
  const asked = new Headers({ authorization: `Bearer ${token}` });
  // A browser resuming a download sends both: the range stands only for the output it began on.
  for (const name of ["range", "if-range"]) {
    const value = c.req.header(name);
    if (value !== undefined) asked.set(name, value);
  }
  const request = new Request(new URL(path, c.req.url), { headers: asked });
  const response = await app.fetch(request, c.env, executionContextOf(c));
  if (!response.ok) return response;
  const headers = new Headers({ "content-type": "text/plain; charset=utf-8" });
  for (const name of ["content-range", "accept-ranges", "etag"]) {
    const value = response.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return new Response(response.body, { status: response.status, headers });
}

/** "Invalid transition: no failed resume to redeliver (409 invalid_transition)". */
function problemMessage(status: number, body: string): string {
  try {
    const problem = JSON.parse(body) as { title?: unknown; detail?: unknown; code?: unknown };
    const title = typeof problem.title === "string" ? problem.title : `HTTP ${status}`;
    const detail = typeof problem.detail === "string" ? `: ${problem.detail}` : "";
    const code = typeof problem.code === "string" ? ` ${problem.code}` : "";
    return `${title}${detail} (${status}${code})`;
  } catch {
    return `The API answered ${status} without a readable problem`;
  }
}

/** Outside a real request (app.request in tests) Hono has no execution context to hand on. */
function executionContextOf(c: ConsoleContext): ConsoleContext["executionCtx"] | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

const name = (error: unknown) => (error instanceof Error ? error.name : "unknown error");

/** Path segments the console puts into API paths; ids are charset-checked by the routes anyway. */
export const segment = (value: string) => encodeURIComponent(value);
