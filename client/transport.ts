// How the typed clients reach the server: one JSON request with a bearer token, whose failure is
// thrown as the server's problem+json. The fetch is the caller's, so tests inside workerd can pass
// the Worker's own `fetch` and scripts the global one.
import type { ErrorCode } from "../shared/errors";

/** Anything that answers a Request: the global `fetch`, a Worker's `fetch`, a service binding. */
export type Fetcher = (request: Request) => Promise<Response>;

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: ErrorCode;
  /** Each validation issue, on a 422. */
  readonly errors?: readonly { readonly path: string; readonly message: string }[];
}

export class ExecInboxError extends Error {
  /**
   * @param retryAfterMs what the answer's Retry-After asked for (429 `inbox_full`, 503
   * `unavailable`), in ms; null when it sent none.
   */
  constructor(
    readonly problem: Problem,
    readonly retryAfterMs: number | null = null,
  ) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.name = "ExecInboxError";
  }
}

export const globalFetcher: Fetcher = (request) => fetch(request);

export async function request<T>(
  fetcher: Fetcher,
  url: string,
  token: string,
  method: string,
  body?: unknown,
): Promise<T> {
  const response = await fetcher(
    new Request(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await response.text();
  if (!response.ok) {
    throw new ExecInboxError(
      problemOf(response.status, text),
      retryAfterMs(response.headers.get("retry-after")),
    );
  }
  return (text === "" ? null : JSON.parse(text)) as T;
}

/** Retry-After in seconds (what exec-inbox sends) as ms; null when absent or not a number. */
function retryAfterMs(header: string | null): number | null {
  const seconds = header === null || header.trim() === "" ? Number.NaN : Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}

/** A proxy or gateway in front of exec-inbox may answer an error without a problem document. */
export function problemOf(status: number, text: string): Problem {
  try {
    const parsed = JSON.parse(text) as Partial<Problem> | null;
    if (parsed?.status === status && typeof parsed.code === "string") return parsed as Problem;
  } catch {
    // not JSON: described below
  }
  return {
    type: "about:blank",
    title: `HTTP ${status}`,
    status,
    detail: text.slice(0, 500),
    code: "unknown" as ErrorCode,
  } as Problem;
}

/** `?a=1&b=2` from the defined entries of a query, or "" when there are none. */
export function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

export const segment = encodeURIComponent;

/** Where a client sends its requests and as whom: the part both typed clients share. */
export abstract class Endpoint {
  private readonly base: string;
  private readonly token: string;
  private readonly fetcher: Fetcher;

  /** `fetch` defaults to the global one; tests in workerd pass the Worker's own. */
  constructor(options: { baseUrl: string; token: string; fetch?: Fetcher }) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    this.fetcher = options.fetch ?? globalFetcher;
  }

  protected call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return request<T>(this.fetcher, `${this.base}${path}`, this.token, method, body);
  }

  /** A GET whose answer is bytes: the response itself, its body unread; a refusal is thrown. */
  protected async stream(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const response = await this.fetcher(
      new Request(`${this.base}${path}`, {
        headers: { authorization: `Bearer ${this.token}`, ...headers },
      }),
    );
    if (!response.ok) throw new ExecInboxError(problemOf(response.status, await response.text()));
    return response;
  }
}
