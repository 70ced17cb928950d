// A typed client for agent hosts and runners. Request types come from the server's zod schemas and
// response types from its view builders, so a contract change breaks callers at compile time.
import { Webhook } from "standardwebhooks";
import type { z } from "zod";
import type { ResumePayload } from "../domain/decision";
import type { Claim, InboxCounts } from "../domain/inbox";
import type { CompletionReply } from "../domain/jobs";
import type {
  ackBody,
  appendMessageBody,
  claimBody,
  completionBody,
  createSessionBody,
  jobsQuery,
  messagesQuery,
  registerRunBody,
  reserveJobBody,
  suspendBody,
} from "../domain/schemas";
import type { JobSummaryView, JobView, MessageView, SessionView } from "../domain/view";

export type {
  Claim,
  CompletionReply,
  InboxCounts,
  JobSummaryView,
  JobView,
  MessageView,
  ResumePayload,
  SessionView,
};

/** `?a=1&b=2` from the defined entries of a query, or "" when there are none. */
function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
export type CompletionInput = z.input<typeof completionBody>;

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
}

export class ExecInboxError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.name = "ExecInboxError";
  }
}

export interface Callback {
  readonly url: string;
  readonly token: string;
}

async function request<T>(url: string, token: string, method: string, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const parsed: unknown = text === "" ? null : JSON.parse(text);
  if (!response.ok) throw new ExecInboxError(parsed as Problem);
  return parsed as T;
}

const segment = encodeURIComponent;

export class ExecInboxClient {
  private readonly base: string;
  private readonly token: string;

  constructor(options: { baseUrl: string; token: string }) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
  }

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return request<T>(`${this.base}${path}`, this.token, method, body);
  }

  private run(sessionId: string, runId: string): string {
    return `/v1/sessions/${segment(sessionId)}/runs/${segment(runId)}`;
  }

  createSession(input: z.input<typeof createSessionBody>): Promise<SessionView> {
    return this.call("POST", "/v1/sessions", input);
  }

  getSession(sessionId: string): Promise<SessionView> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}`);
  }

  deleteSession(sessionId: string): Promise<null> {
    return this.call("DELETE", `/v1/sessions/${segment(sessionId)}`);
  }

  appendMessage(
    sessionId: string,
    input: z.input<typeof appendMessageBody>,
  ): Promise<{ index: number }> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/messages`, input);
  }

  /** One page of messages by index; pass `next_after` back as `after` for the next page. */
  listMessages(
    sessionId: string,
    query: Partial<z.infer<typeof messagesQuery>> = {},
  ): Promise<{ messages: MessageView[]; next_after: number | null }> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}/messages${queryString(query)}`);
  }

  registerRun(
    sessionId: string,
    input: z.input<typeof registerRunBody> = {},
  ): Promise<{ run_id: string; notify_seq: number }> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/runs`, input);
  }

  suspend(
    sessionId: string,
    runId: string,
    input: z.input<typeof suspendBody>,
  ): Promise<SessionView> {
    return this.call("POST", `${this.run(sessionId, runId)}/suspend`, input);
  }

  finishRun(sessionId: string, runId: string): Promise<SessionView> {
    return this.call("POST", `${this.run(sessionId, runId)}/finish`);
  }

  notifications(
    sessionId: string,
    runId: string,
    after: number,
    waitMs = 0,
  ): Promise<{ notify_seq: number; pending: number }> {
    return this.call(
      "GET",
      `${this.run(sessionId, runId)}/notifications?after=${after}&wait_ms=${waitMs}`,
    );
  }

  reserveJob(
    sessionId: string,
    input: z.input<typeof reserveJobBody>,
  ): Promise<{ job: JobView; callback: Callback }> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/exec-jobs`, input);
  }

  getJob(sessionId: string, handle: string): Promise<JobView> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}/exec-jobs/${segment(handle)}`);
  }

  /** One page of job summaries (no outputs) in reservation order; pass `next` back as `after`. */
  listJobs(
    sessionId: string,
    query: Partial<z.infer<typeof jobsQuery>> = {},
  ): Promise<{ jobs: JobSummaryView[]; next: number | null }> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}/exec-jobs${queryString(query)}`);
  }

  inbox(sessionId: string): Promise<InboxCounts> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}/inbox`);
  }

  claim(sessionId: string, input: z.input<typeof claimBody> = {}): Promise<{ claims: Claim[] }> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/inbox/claim`, input);
  }

  ack(
    sessionId: string,
    input: z.input<typeof ackBody>,
  ): Promise<{ acked: string[]; unknown: string[] }> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/inbox/ack`, input);
  }
}

/** The runner's side: report a terminal result to the callback handed out at reservation. */
export function postCompletion(
  callback: Callback,
  input: CompletionInput,
): Promise<CompletionReply> {
  return request<CompletionReply>(callback.url, callback.token, "POST", input);
}

/**
 * Verifies a resume webhook (Standard Webhooks signature and timestamp) and returns its payload.
 * Throws when the signature does not match `secret` (`whsec_…`).
 */
export async function verifyResume(incoming: Request, secret: string): Promise<ResumePayload> {
  const body = await incoming.text();
  const headers: Record<string, string> = {};
  incoming.headers.forEach((value, key) => {
    headers[key] = value;
  });
  return new Webhook(secret).verify(body, headers) as ResumePayload;
}
