import type { JobSummaryView, JobView } from "@exec-inbox/client";
import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { AppEnv } from "./context";
import * as jobRoutes from "./routes/jobs";
import { answer, type SuccessBody, serve, type UndeclaredFields } from "./serve";

const summary: JobSummaryView = {
  handle: "h",
  command: "true",
  lifetime: "L",
  status: "running",
  exit_code: null,
  output_truncated: false,
  output_bytes_total: 0,
  output_bytes_total_known: true,
  ended_by: null,
  reserved_at: "2026-01-01T00:00:00.000Z",
  completed_at: null,
  heartbeat_timeout_ms: null,
  last_heartbeat_at: null,
  progress: null,
  cancel_requested: false,
  full_output: null,
};
const job: JobView = { ...summary, output: "" };

type GetJob = SuccessBody<typeof jobRoutes.getJob, 200>;
type ListJobs = SuccessBody<typeof jobRoutes.listJobs, 200>;

describe("answer takes only the fields its route declares", () => {
  it("names a leaked field, at any depth, as a type; an exact value has none", () => {
    expectTypeOf<UndeclaredFields<GetJob, GetJob>>().toEqualTypeOf<never>();
    expectTypeOf<
      UndeclaredFields<GetJob & { callback_token: string }, GetJob>
    >().toEqualTypeOf<"value.callback_token">();
    expectTypeOf<
      UndeclaredFields<{ jobs: JobView[]; next: number | null }, ListJobs>
    >().toEqualTypeOf<"value.jobs[].output">();
  });

  it("an exact value is answered as it is, with the status it is declared under", async () => {
    const response = answer(jobRoutes.getJob, 200, { ok: true, value: job });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(job);
    const leaked = { ...job, callback_token: "secret" };
    // @ts-expect-error: callback_token is not a field getJob declares (the point of this test)
    answer(jobRoutes.getJob, 200, { ok: true, value: leaked });
    const page = { jobs: [job], next: null };
    // @ts-expect-error: a list answers summaries; output is not one of their fields
    answer(jobRoutes.listJobs, 200, { ok: true, value: page });
    const duplicate = { outcome: "duplicate" as const, generation: 1 };
    // @ts-expect-error: a duplicate is the 200 answer's body, never the 202's
    answer(jobRoutes.postCompletion, 202, { ok: true, value: duplicate });
  });
});

describe("a route declares only what its reader checks", () => {
  const route = (request: Parameters<typeof createRoute>[0]["request"]) =>
    createRoute({
      method: "post",
      path: "/v1/probe",
      request,
      responses: { 200: { description: "ok" } },
    });
  const mount = (request: Parameters<typeof createRoute>[0]["request"]) => () =>
    serve(new OpenAPIHono<AppEnv>(), route(request), () => new Response(null));

  it("cookies, a header named in capitals, or a body that is not JSON do not mount, unchecked", () => {
    expect(mount({ cookies: z.object({ session: z.string() }) })).toThrow(/cookies/);
    expect(mount({ headers: z.object({ "Idempotency-Key": z.string() }) })).toThrow(
      /Idempotency-Key/,
    );
    const form = { content: { "application/x-www-form-urlencoded": { schema: z.object({}) } } };
    expect(mount({ body: form })).toThrow(/application\/x-www-form-urlencoded/);
  });

  it("the parts the reader checks mount", () => {
    expect(
      mount({
        params: z.object({ sid: z.string() }),
        query: z.object({ limit: z.string().optional() }),
        headers: z.object({ range: z.string().optional() }),
        body: { content: { "application/json": { schema: z.object({}) } } },
      }),
    ).not.toThrow();
  });
});
