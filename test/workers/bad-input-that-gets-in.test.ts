// Input that passed the revision-1 checks and still did harm: dot-segment ids, output
// byte totals that contradict the output, and JSON bodies declared in another charset.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

function expectProblem(answer: api.Answer, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers.get("content-type")).toBe("application/problem+json");
  expect(answer.body).toMatchObject({ status, code });
}

/** Tables in an object's SQLite database: none means the request left no schema behind. */
const tablesOf = (name: string) =>
  runInDurableObject(api.stubOf(name), (_instance, state) =>
    state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .toArray()
      .map((row) => row.name)
      .filter((table) => !table.startsWith("_cf_")),
  );

describe("ids that no URL can carry are refused", () => {
  it.each([".", ".."])("a session id %j gets 422 and uses nothing up", async (id) => {
    const answer = await api.call("POST", "/v1/sessions", { body: { id } });
    expectProblem(answer, 422, "invalid_request");
    expect(answer.body.detail).toMatch(/id/);
    expect(await tablesOf(id)).toEqual([]);
  });

  it.each([".", ".."])(
    "a handle %j gets 422 on reserve and on suspend, and the session is unchanged",
    async (handle) => {
      const sid = api.uniqueId("dots");
      await api.createSession(sid);
      const runId = await api.registerRun(sid);
      const before = await api.view(sid);
      expectProblem(
        await api.call("POST", `/v1/sessions/${sid}/exec-jobs`, {
          body: { handle, command: "ls" },
        }),
        422,
        "invalid_request",
      );
      expectProblem(
        await api.call("POST", `/v1/sessions/${sid}/runs/${runId}/suspend`, {
          body: { waiting_for: [handle] },
        }),
        422,
        "invalid_request",
      );
      expect(await api.view(sid)).toEqual(before);
      expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs).toEqual([]);
    },
  );

  it("a run id '..' gets 422 and registers nothing", async () => {
    const sid = api.uniqueId("dots-run");
    await api.createSession(sid);
    const before = await api.view(sid);
    expectProblem(
      await api.call("POST", `/v1/sessions/${sid}/runs`, { body: { run_id: ".." } }),
      422,
      "invalid_request",
    );
    expect(await api.view(sid)).toEqual(before);
  });

  it("ids that merely contain dots are still accepted and reachable", async () => {
    const sid = `...${api.uniqueId("dots")}`;
    await api.createSession(sid);
    const reserved = await api.reserve(sid, "...");
    expect(new URL(reserved.callback.url).pathname).toBe(
      `/v1/sessions/${sid}/exec-jobs/.../completion`,
    );
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/...`)).status).toBe(200);
  });
});

describe("output_bytes_total must agree with the output", () => {
  async function job() {
    const sid = api.uniqueId("bytes");
    await api.createSession(sid);
    const { callback } = await api.reserve(sid, "h1");
    return { sid, token: callback.token };
  }
  const done = (output: string, extra: Record<string, unknown>) => ({
    status: "completed",
    exit_code: 0,
    output,
    ...extra,
  });

  it.each([
    ["smaller than the output's UTF-8 bytes", done("hello", { output_bytes_total: 4 })],
    ["smaller, counting multi-byte characters", done("é€😀", { output_bytes_total: 8 })],
    [
      "smaller than a truncated output beyond the cut-marker allowance",
      done("x".repeat(1000), { output_truncated: true, output_bytes_total: 10 }),
    ],
    [
      "smaller than a killed output beyond the allowance for the runner's line",
      { status: "killed", exit_code: null, output: "x".repeat(1000), output_bytes_total: 10 },
    ],
  ])("a total %s gets 422 and the job stays running", async (_name, body) => {
    const { sid, token } = await job();
    const before = await api.view(sid);
    const answer = await api.complete(sid, "h1", token, body);
    expectProblem(answer, 422, "invalid_request");
    expect(answer.body.detail).toMatch(/output_bytes_total/);
    expect(await api.view(sid)).toEqual(before);
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.status).toBe("running");
  });

  it.each([
    ["equal to the UTF-8 bytes of an untruncated output", done("é€😀", { output_bytes_total: 9 })],
    ["absent (the service counts the output)", done("hello", {})],
    // A runner that trims, normalises CRLF or folds undecodable runs sends fewer bytes than it
    // counted: kept as sent rather than losing the result over a count.
    ["larger than an untruncated output", done("abc\n", { output_bytes_total: 5 })],
    [
      "larger than an untruncated output stated explicitly",
      done("hello", { output_truncated: false, output_bytes_total: 5000 }),
    ],
    [
      "between the replacement characters' raw minimum and their UTF-8 size",
      // A runner shows each undecodable byte run (1–3 bytes) as one U+FFFD of 3 UTF-8 bytes.
      done("a\uFFFD\uFFFDb", { output_bytes_total: 4 }),
    ],
    [
      "larger than a truncated output",
      done("head…tail", { output_truncated: true, output_bytes_total: 1_000_000 }),
    ],
    [
      "a little under a killed output that ends with the runner's line naming the signal",
      {
        status: "killed",
        exit_code: null,
        output:
          "started\n\n[exec-inbox-runner] killed by SIGKILL, a signal the runner did not send\n",
        output_bytes_total: 8,
      },
    ],
    [
      "a little under a truncated output that carries a cut marker",
      done(`${"h".repeat(100)}\n…[1 bytes omitted]…\n${"t".repeat(100)}`, {
        output_truncated: true,
        output_bytes_total: 201,
      }),
    ],
  ])("a total %s is accepted", async (_name, body) => {
    const { sid, token } = await job();
    expect((await api.complete(sid, "h1", token, body)).status).toBe(202);
    const pulled = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body;
    const bytes = new TextEncoder().encode(body.output).byteLength;
    expect(pulled.output_bytes_total).toBe(
      (body as { output_bytes_total?: number }).output_bytes_total ?? bytes,
    );
  });
});

describe("a JSON body is UTF-8 or refused", () => {
  it.each([
    "application/json; charset=utf-16",
    "application/json; charset=UTF-16LE",
    'application/json; charset="utf-16"',
    "application/json;charset=iso-8859-1",
    "application/json; charset=utf-8; charset=latin1",
    "application/json; charset*=utf-16''",
    "application/json; charset=",
  ])("content-type %j gets 415 and changes nothing", async (type) => {
    const sid = api.uniqueId("charset");
    const answer = await api.call("POST", "/v1/sessions", {
      raw: JSON.stringify({ id: sid }),
      headers: { "content-type": type },
    });
    expectProblem(answer, 415, "unsupported_media_type");
    expect(answer.body.detail).toMatch(/charset/);
    expectProblem(await api.call("GET", `/v1/sessions/${sid}`), 404, "not_found");
  });

  it.each([
    "application/json",
    "application/json; charset=utf-8",
    "application/json; charset=UTF-8",
    'application/json; charset="utf-8"',
    "application/json;charset=utf8",
    "application/json; foo=bar; charset=Utf-8",
  ])("content-type %j is read as UTF-8", async (type) => {
    const sid = api.uniqueId("charset-ok");
    const answer = await api.call("POST", "/v1/sessions", {
      raw: JSON.stringify({ id: sid, metadata: { name: "café" } }),
      headers: { "content-type": type },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.metadata).toEqual({ name: "café" });
  });

  it("a completion declared in UTF-16 gets 415 and the job stays running", async () => {
    const sid = api.uniqueId("charset-job");
    await api.createSession(sid);
    const { callback } = await api.reserve(sid, "h1");
    const answer = await api.call("POST", `/v1/sessions/${sid}/exec-jobs/h1/completion`, {
      raw: JSON.stringify({ status: "completed", exit_code: 0, output: "x" }),
      token: callback.token,
      headers: { "content-type": "application/json; charset=utf-16" },
    });
    expectProblem(answer, 415, "unsupported_media_type");
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.status).toBe("running");
  });
});
