// A typed client for agent hosts and runners. Its request and response types are those of the
// route table the server serves (src/http/routes), so a contract change breaks callers at compile time.
import { Webhook } from "standardwebhooks";
import type { SuccessBody } from "../src/http/routes/common";
import type * as inboxRoutes from "../src/http/routes/inbox";
import type * as jobRoutes from "../src/http/routes/jobs";
import type * as runRoutes from "../src/http/routes/runs";
import type * as sessionRoutes from "../src/http/routes/sessions";
import { resumePayloadSchema } from "../src/http/schemas/resume";
import { Endpoint, type Fetcher, globalFetcher, queryString, request, segment } from "./transport";
import type {
  Callback,
  CompletionInput,
  CompletionReply,
  InboxCounts,
  JobView,
  Query,
  RequestBody,
  ResumePayload,
  SessionView,
} from "./wire-types";

export {
  type CompleteOutcome,
  type JobCallback,
  JobHandle,
  type StartJobOptions,
  startJob,
} from "./job-handle";
export { ExecInboxError, type Fetcher, type Problem } from "./transport";
export type {
  Callback,
  Claim,
  CompletionInput,
  CompletionReply,
  InboxCounts,
  JobSummaryView,
  JobView,
  MessageView,
  Query,
  RequestBody,
  ResumePayload,
  SessionView,
} from "./wire-types";

export class ExecInboxClient extends Endpoint {
  private run(sessionId: string, runId: string): string {
    return `/v1/sessions/${segment(sessionId)}/runs/${segment(runId)}`;
  }

  createSession(input: RequestBody<typeof sessionRoutes.createSession>): Promise<SessionView> {
    return this.call("POST", "/v1/sessions", input);
  }

  getSession(sessionId: string): Promise<SessionView> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}`);
  }

  /** Names, replaces (`{url, token}`) or removes (`null`) the runner the session's MCP tools call. */
  setRunner(
    sessionId: string,
    input: RequestBody<typeof sessionRoutes.setRunner>,
  ): Promise<SessionView> {
    return this.call("PUT", `/v1/sessions/${segment(sessionId)}/runner`, input);
  }

  deleteSession(sessionId: string): Promise<null> {
    return this.call("DELETE", `/v1/sessions/${segment(sessionId)}`);
  }

  /** The session object's billed units since it started (what the benchmarks read). */
  getSessionStats(
    sessionId: string,
  ): Promise<SuccessBody<typeof sessionRoutes.getSessionStats, 200>> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}/stats`);
  }

  appendMessage(
    sessionId: string,
    input: RequestBody<typeof sessionRoutes.appendMessage>,
  ): Promise<SuccessBody<typeof sessionRoutes.appendMessage, 201>> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/messages`, input);
  }

  /** One page of messages by index; pass `next_after` back as `after` for the next page. */
  listMessages(
    sessionId: string,
    query: Query<typeof sessionRoutes.listMessages> = {},
  ): Promise<SuccessBody<typeof sessionRoutes.listMessages, 200>> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}/messages${queryString(query)}`);
  }

  registerRun(
    sessionId: string,
    input: RequestBody<typeof runRoutes.registerRun> = {},
  ): Promise<SuccessBody<typeof runRoutes.registerRun, 201>> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/runs`, input);
  }

  suspend(
    sessionId: string,
    runId: string,
    input: RequestBody<typeof runRoutes.suspendRun>,
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
  ): Promise<SuccessBody<typeof runRoutes.runNotifications, 200>> {
    return this.call(
      "GET",
      `${this.run(sessionId, runId)}/notifications?after=${after}&wait_ms=${waitMs}`,
    );
  }

  reserveJob(
    sessionId: string,
    input: RequestBody<typeof jobRoutes.reserveJob>,
  ): Promise<SuccessBody<typeof jobRoutes.reserveJob, 201>> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/exec-jobs`, input);
  }

  getJob(sessionId: string, handle: string): Promise<JobView> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}/exec-jobs/${segment(handle)}`);
  }

  /**
   * A job's full output (contract §9), streamed: all of it, or `length` bytes from `offset`
   * (206; fewer at the end). A read resuming one begun earlier passes the `ETag` it got as
   * `etag` (sent as `If-Range`): if the output is no longer that one (its session was re-created),
   * the answer is 200 with the whole new output, never a range of it. The body is the caller's to
   * read; a 416 or 404 is thrown.
   */
  readFullOutput(
    sessionId: string,
    handle: string,
    range?: { offset: number; length: number; etag?: string },
  ): Promise<Response> {
    const path = `/v1/sessions/${segment(sessionId)}/exec-jobs/${segment(handle)}/output`;
    if (range === undefined) return this.stream(path);
    const bytes = `bytes=${range.offset}-${range.offset + range.length - 1}`;
    return this.stream(path, {
      range: bytes,
      ...(range.etag === undefined ? {} : { "if-range": range.etag }),
    });
  }

  /** Asks the runner, through its next heartbeat's answer, to end the job's command. */
  cancelJob(
    sessionId: string,
    handle: string,
  ): Promise<SuccessBody<typeof jobRoutes.cancelJob, 202>> {
    return this.call(
      "POST",
      `/v1/sessions/${segment(sessionId)}/exec-jobs/${segment(handle)}/cancel`,
    );
  }

  /** One page of job summaries (no outputs) in reservation order; pass `next` back as `after`. */
  listJobs(
    sessionId: string,
    query: Query<typeof jobRoutes.listJobs> = {},
  ): Promise<SuccessBody<typeof jobRoutes.listJobs, 200>> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}/exec-jobs${queryString(query)}`);
  }

  inbox(sessionId: string): Promise<InboxCounts> {
    return this.call("GET", `/v1/sessions/${segment(sessionId)}/inbox`);
  }

  claim(
    sessionId: string,
    input: RequestBody<typeof inboxRoutes.claimInbox> = {},
  ): Promise<SuccessBody<typeof inboxRoutes.claimInbox, 200>> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/inbox/claim`, input);
  }

  ack(
    sessionId: string,
    input: RequestBody<typeof inboxRoutes.ackInbox>,
  ): Promise<SuccessBody<typeof inboxRoutes.ackInbox, 200>> {
    return this.call("POST", `/v1/sessions/${segment(sessionId)}/inbox/ack`, input);
  }
}

/** The runner's side: report a terminal result to the callback handed out at reservation. */
export function postCompletion(
  callback: Pick<Callback, "url" | "token">,
  input: CompletionInput,
  options: { fetch?: Fetcher } = {},
): Promise<CompletionReply> {
  const fetcher = options.fetch ?? globalFetcher;
  return request<CompletionReply>(fetcher, callback.url, callback.token, "POST", input);
}

// The document's schema is closed; a client drops top-level fields a newer server may add.
const RESUME_PAYLOAD = resumePayloadSchema.strip();

/**
 * Verifies a resume webhook (Standard Webhooks signature and timestamp) and returns its payload.
 * Throws when the signature does not match `secret` (`whsec_…`), or the signed body is not a
 * resume payload.
 */
export async function verifyResume(incoming: Request, secret: string): Promise<ResumePayload> {
  const body = await incoming.text();
  const headers: Record<string, string> = {};
  incoming.headers.forEach((value, key) => {
    headers[key] = value;
  });
  return RESUME_PAYLOAD.parse(new Webhook(secret).verify(body, headers));
}
