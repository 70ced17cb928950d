import { describe, expect, it } from "vitest";
import * as api from "../support/api";

type Route = { method: string; path: (sid: string, runId: string) => string; body?: unknown };

// Every agent-token route with a JSON body, and a valid body for it.
const BODY_ROUTES: Route[] = [
  { method: "POST", path: () => "/v1/sessions", body: { id: "fresh-id" } },
  {
    method: "POST",
    path: (sid) => `/v1/sessions/${sid}/messages`,
    body: { role: "user", content: "hi" },
  },
  { method: "POST", path: (sid) => `/v1/sessions/${sid}/runs`, body: {} },
  {
    method: "POST",
    path: (sid, run) => `/v1/sessions/${sid}/runs/${run}/suspend`,
    body: { waiting_for: ["h1"] },
  },
  {
    method: "POST",
    path: (sid) => `/v1/sessions/${sid}/exec-jobs`,
    body: { handle: "h2", command: "ls" },
  },
  { method: "POST", path: (sid) => `/v1/sessions/${sid}/inbox/claim`, body: { max: 1 } },
  { method: "POST", path: (sid) => `/v1/sessions/${sid}/inbox/ack`, body: { ids: ["x"] } },
];

const ALL_ROUTES: Route[] = [
  ...BODY_ROUTES,
  { method: "GET", path: (sid) => `/v1/sessions/${sid}` },
  { method: "DELETE", path: (sid) => `/v1/sessions/${sid}` },
  { method: "POST", path: (sid, run) => `/v1/sessions/${sid}/runs/${run}/finish` },
  { method: "GET", path: (sid, run) => `/v1/sessions/${sid}/runs/${run}/notifications` },
  { method: "GET", path: (sid) => `/v1/sessions/${sid}/exec-jobs` },
  { method: "GET", path: (sid) => `/v1/sessions/${sid}/exec-jobs/h1` },
  { method: "GET", path: (sid) => `/v1/sessions/${sid}/inbox` },
];

/** A session with a job and an active run: every route has something to change. */
async function fixture() {
  const sid = api.uniqueId("bad");
  await api.createSession(sid);
  const job = await api.reserve(sid, "h1");
  const runId = await api.registerRun(sid);
  return { sid, runId, token: job.callback.token };
}

function expectProblem(
  answer: { status: number; headers: Headers; body: any },
  status: number,
  code: string,
) {
  expect(answer.status).toBe(status);
  expect(answer.headers.get("content-type")).toBe("application/problem+json");
  expect(answer.body).toMatchObject({ status, code });
  expect(typeof answer.body.type).toBe("string");
  expect(typeof answer.body.title).toBe("string");
  expect(typeof answer.body.detail).toBe("string");
}

describe("bad input on every route changes nothing", () => {
  it.each(ALL_ROUTES)("$method $path: a missing or wrong agent token gets 401", async (route) => {
    const { sid, runId } = await fixture();
    const before = await api.view(sid);
    for (const token of [null, "wrong-token", ""]) {
      const answer = await api.call(route.method, route.path(sid, runId), {
        body: route.body,
        token,
      });
      expectProblem(answer, 401, "unauthorized");
    }
    expect(await api.view(sid)).toEqual(before);
  });

  it.each(BODY_ROUTES)(
    "$method $path: malformed JSON gets 422 with the parse position",
    async (route) => {
      const { sid, runId } = await fixture();
      const before = await api.view(sid);
      const answer = await api.call(route.method, route.path(sid, runId), {
        raw: '{"a": 1,',
        headers: { "content-type": "application/json" },
      });
      expectProblem(answer, 422, "invalid_request");
      expect(answer.body.detail).toMatch(/position 8/);
      const broken = await api.call(route.method, route.path(sid, runId), {
        raw: '{"a" 1}',
        headers: { "content-type": "application/json" },
      });
      expect(broken.body.detail).toMatch(/position 5/);
      expect(await api.view(sid)).toEqual(before);
    },
  );

  it.each(BODY_ROUTES)("$method $path: a wrong content type gets 415", async (route) => {
    const { sid, runId } = await fixture();
    const before = await api.view(sid);
    const answer = await api.call(route.method, route.path(sid, runId), {
      raw: JSON.stringify(route.body),
      headers: { "content-type": "text/plain" },
    });
    expectProblem(answer, 415, "unsupported_media_type");
    expect(await api.view(sid)).toEqual(before);
  });

  it.each(ALL_ROUTES)("$method $path: a body over 2 MiB gets 413 before parsing", async (route) => {
    const { sid, runId } = await fixture();
    const before = await api.view(sid);
    const answer = await api.call(
      route.method === "GET" ? "POST" : route.method,
      route.path(sid, runId),
      {
        raw: `{"x":"${"a".repeat(2 * 1024 * 1024)}"}`,
        headers: { "content-type": "application/json" },
      },
    );
    // GET routes have no POST twin; an oversized body is still refused before routing.
    expectProblem(answer, 413, "payload_too_large");
    expect(await api.view(sid)).toEqual(before);
  });

  it.each(ALL_ROUTES.filter((route) => route.path("s", "r") !== "/v1/sessions"))(
    "$method $path: an unknown session gets 404",
    async (route) => {
      const answer = await api.call(route.method, route.path(api.uniqueId("ghost"), "run-x"), {
        body: route.body,
      });
      expectProblem(answer, 404, "not_found");
    },
  );

  it.each([
    ["/v1/sessions", { id: "" }],
    ["/v1/sessions", { id: "a/b" }],
    ["/v1/sessions", { id: "x".repeat(129) }],
    ["/v1/sessions", { id: "ok", unknown_field: 1 }],
    ["/v1/sessions", { id: "ok", metadata: [] }],
    ["/v1/sessions/{sid}/messages", { role: "robot", content: "x" }],
    ["/v1/sessions/{sid}/messages", { role: "user" }],
    ["/v1/sessions/{sid}/runs/{run}/suspend", { waiting_for: [] }],
    [
      "/v1/sessions/{sid}/runs/{run}/suspend",
      { waiting_for: Array.from({ length: 65 }, (_, i) => `h${i}`) },
    ],
    ["/v1/sessions/{sid}/runs/{run}/suspend", { waiting_for: ["h1"], ceiling_ms: 999 }],
    ["/v1/sessions/{sid}/runs/{run}/suspend", { waiting_for: ["h1"], ceiling_ms: 604_800_001 }],
    ["/v1/sessions/{sid}/runs/{run}/suspend", { waiting_for: ["h1"], wake: "some" }],
    ["/v1/sessions/{sid}/exec-jobs", { handle: "h 1", command: "ls" }],
    ["/v1/sessions/{sid}/exec-jobs", { handle: "h3", command: "x".repeat(8 * 1024 + 1) }],
    ["/v1/sessions/{sid}/inbox/ack", { ids: [] }],
    ["/v1/sessions/{sid}/inbox/ack", { ids: "x" }],
  ])("POST %s with %j gets 422", async (template, body) => {
    const { sid, runId } = await fixture();
    const before = await api.view(sid);
    const path = template.replace("{sid}", sid).replace("{run}", runId);
    const answer = await api.call("POST", path, { body });
    expectProblem(answer, 422, "invalid_request");
    expect(Array.isArray(answer.body.errors)).toBe(true);
    expect(await api.view(sid)).toEqual(before);
  });

  it("notifications with out-of-range numbers get 422", async () => {
    const { sid, runId } = await fixture();
    for (const query of ["after=-1", "wait_ms=30001", "wait_ms=abc", "after=1.5"]) {
      const answer = await api.call(
        "GET",
        `/v1/sessions/${sid}/runs/${runId}/notifications?${query}`,
      );
      expectProblem(answer, 422, "invalid_request");
    }
  });

  it("a path id outside the charset is not found", async () => {
    for (const path of [
      "/v1/sessions/%2e%2e",
      "/v1/sessions/a%2Fb",
      "/v1/sessions/%C3%A9t%C3%A9",
    ]) {
      expectProblem(await api.call("GET", path), 404, "not_found");
    }
  });
});

describe("bad completions change nothing", () => {
  const completion = { status: "completed", exit_code: 0, output: "x" };

  it("a missing token gets 401 and a bad body gets 415 or 422", async () => {
    const { sid, token } = await fixture();
    const before = await api.view(sid);
    expectProblem(
      await api.call("POST", `/v1/sessions/${sid}/exec-jobs/h1/completion`, {
        body: completion,
        token: null,
      }),
      401,
      "unauthorized",
    );
    for (const body of [
      { ...completion, status: "running" },
      { ...completion, exit_code: 1.5 },
      { ...completion, exit_code: "0" },
      { ...completion, output: null },
      { ...completion, ended_by: "cosmic_ray" },
      { ...completion, output_bytes_total: -1 },
      { ...completion, extra: true },
    ]) {
      expectProblem(await api.complete(sid, "h1", token, body), 422, "invalid_request");
    }
    const wrongType = await api.call("POST", `/v1/sessions/${sid}/exec-jobs/h1/completion`, {
      raw: JSON.stringify(completion),
      token,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectProblem(wrongType, 415, "unsupported_media_type");
    const oversized = await api.call("POST", `/v1/sessions/${sid}/exec-jobs/h1/completion`, {
      raw: JSON.stringify({ ...completion, output: "y".repeat(2 * 1024 * 1024) }),
      token,
      headers: { "content-type": "application/json" },
    });
    expectProblem(oversized, 413, "payload_too_large");
    expect(await api.view(sid)).toEqual(before);
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.status).toBe("running");
  });
});

describe("state conflicts", () => {
  it("suspending or finishing a run that is not active is invalid_transition; a second run is run_conflict", async () => {
    const { sid, runId } = await fixture();
    const before = await api.view(sid);
    expectProblem(
      await api.call("POST", `/v1/sessions/${sid}/runs`, { body: { run_id: "other" } }),
      409,
      "run_conflict",
    );
    expectProblem(
      await api.call("POST", `/v1/sessions/${sid}/runs/other/suspend`, {
        body: { waiting_for: ["h1"] },
      }),
      409,
      "invalid_transition",
    );
    expectProblem(
      await api.call("POST", `/v1/sessions/${sid}/runs/other/finish`),
      409,
      "invalid_transition",
    );
    expectProblem(
      await api.call("POST", `/v1/sessions/${sid}/runs/${runId}/suspend`, {
        body: { waiting_for: ["nope"] },
      }),
      404,
      "not_found",
    );
    expect(await api.view(sid)).toEqual(before);
  });
});
