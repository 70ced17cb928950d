// The request and response types of the route table the server serves (src/http/routes), as the
// client and its callers name them. The calls that send them are the client's (index.ts).
import type { RouteConfig } from "@hono/zod-openapi";
import type { z } from "zod";
import type { SuccessBody } from "../src/http/routes/common";
import type * as inboxRoutes from "../src/http/routes/inbox";
import type * as jobRoutes from "../src/http/routes/jobs";
import type * as sessionRoutes from "../src/http/routes/sessions";
import type { resumePayloadSchema } from "../src/http/schemas/resume";

/** The JSON body a route takes, as a caller writes it (defaults may be left out). */
export type RequestBody<R extends RouteConfig> = R["request"] extends {
  body: { content: { "application/json": { schema: infer S extends z.ZodType } } };
}
  ? z.input<S>
  : never;
/** The query a route takes, as a caller writes it. */
export type Query<R extends RouteConfig> = R["request"] extends { query: infer S extends z.ZodType }
  ? Partial<z.output<S>>
  : never;

export type SessionView = SuccessBody<typeof sessionRoutes.getSession, 200>;
export type MessageView = SuccessBody<typeof sessionRoutes.listMessages, 200>["messages"][number];
export type JobView = SuccessBody<typeof jobRoutes.getJob, 200>;
export type JobSummaryView = SuccessBody<typeof jobRoutes.listJobs, 200>["jobs"][number];
/** 202 for a result taken, 200 for the same result sent again. */
export type CompletionReply =
  | SuccessBody<typeof jobRoutes.postCompletion, 202>
  | SuccessBody<typeof jobRoutes.postCompletion, 200>;
export type InboxCounts = SuccessBody<typeof inboxRoutes.getInbox, 200>;
export type Claim = SuccessBody<typeof inboxRoutes.claimInbox, 200>["claims"][number];
export type ResumePayload = z.output<typeof resumePayloadSchema>;
export type CompletionInput = RequestBody<typeof jobRoutes.postCompletion>;
export type Callback = SuccessBody<typeof jobRoutes.reserveJob, 201>["callback"];
