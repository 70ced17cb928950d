// Deeply nested JSON: every route that takes a body refuses nesting past the
// stated limit with 422 before anything recurses over it, where it used to be a 500 RangeError.
import { describe, expect, it } from "vitest";
import { depthDetail, MAX_JSON_DEPTH } from "../../shared/json-depth";
import * as api from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

/** `depth` nested objects around a number: `{"a":{"a":1}}` is depth 2. */
const deepObject = (depth: number): string => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const post = (path: string, body: string, token: string = api.AGENT_TOKEN, method = "POST") =>
  api.workerFetch(
    new Request(`http://exec-inbox.test${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
    }),
  );

async function expectTooDeep(answer: Response, offset: number) {
  expect(answer.status).toBe(422);
  expect(answer.headers.get("content-type")).toBe("application/problem+json");
  expect(await answer.json()).toMatchObject({
    status: 422,
    code: "invalid_request",
    detail: depthDetail(offset),
  });
}

describe("JSON nested deeper than the limit", () => {
  it("session metadata 3,000 levels deep gets 422 naming the limit, and no session is made", async () => {
    const sid = api.uniqueId("deep-meta");
    const prefix = `{"id":"${sid}","metadata":{"k":`;
    const answer = await post("/v1/sessions", `${prefix}${deepObject(3_000)}}}`);
    // The offending brace: the body's object and metadata are the first two levels, so the
    // (MAX - 1)th brace of the value, 5 characters apart, is the level past the limit.
    await expectTooDeep(answer, prefix.length + '{"a":'.length * (MAX_JSON_DEPTH - 2));
    expect((await api.call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
  });

  it("message content 5,000 levels deep gets 422 and stores no message", async () => {
    const sid = api.uniqueId("deep-content");
    await api.createSession(sid);
    const answer = await post(
      `/v1/sessions/${sid}/messages`,
      `{"role":"user","content":[{"type":"text","text":"x","data":${deepObject(5_000)}}]}`,
    );
    expect(answer.status).toBe(422);
    expect(((await answer.json()) as { detail: string }).detail).toMatch(/deeper than 128 levels/);
    expect((await api.view(sid)).message_count).toBe(0);
  });

  it("metadata exactly at the limit is stored and read back whole", async () => {
    const sid = api.uniqueId("deep-limit");
    // The body object and `metadata` are two levels: the value under `k` may nest 126 more.
    const metadata = `{"k":${deepObject(MAX_JSON_DEPTH - 2)}}`;
    const answer = await post("/v1/sessions", `{"id":"${sid}","metadata":${metadata}}`);
    expect(answer.status).toBe(201);
    expect((await api.view(sid)).metadata).toEqual(JSON.parse(metadata));
    await expectTooDeep(
      await post(
        "/v1/sessions",
        `{"id":"${sid}-over","metadata":{"k":${deepObject(MAX_JSON_DEPTH - 1)}}}`,
      ),
      `{"id":"${sid}-over","metadata":{"k":`.length + '{"a":'.length * (MAX_JSON_DEPTH - 2),
    );
  });

  it("brackets inside strings do not count toward the depth", async () => {
    const sid = api.uniqueId("deep-string");
    const text = "[{".repeat(5_000);
    const answer = await post("/v1/sessions", JSON.stringify({ id: sid, metadata: { text } }));
    expect(answer.status).toBe(201);
  });

  it("every documented operation that takes a JSON body answers 422 with the same detail", async () => {
    const sid = api.uniqueId("deep-route");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    const runId = await api.registerRun(sid);
    const tokens: Record<string, string> = {
      agentToken: api.AGENT_TOKEN,
      callbackToken: job.callback.token,
      operatorToken: OPERATOR_TOKEN,
    };
    const { body: document } = await api.call("GET", "/openapi.json", { token: null });
    const operations = Object.entries<Record<string, any>>(document.paths).flatMap(
      ([template, item]) =>
        Object.entries<any>(item)
          // JSON bodies only: a binary upload route has its own reader and limits.
          .filter(([, operation]) => operation.requestBody?.content?.["application/json"])
          .map(([method, operation]) => ({
            method,
            template,
            token: tokens[Object.keys(operation.security?.[0] ?? {})[0] ?? ""] ?? "",
          })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(9);
    const before = await api.view(sid);
    for (const { method, template, token } of operations) {
      expect(["post", "put"]).toContain(method);
      const path = template
        .replace("{tenant}", "default")
        .replace("{sid}", sid)
        .replace("{run_id}", runId)
        .replace("{handle}", "h1");
      const answer = await post(path, `{"deep":${deepObject(3_000)}}`, token, method.toUpperCase());
      expect([template, answer.status]).toEqual([template, 422]);
      expect(((await answer.json()) as { detail: string }).detail).toBe(
        depthDetail('{"deep":'.length + 5 * (MAX_JSON_DEPTH - 1)),
      );
    }
    expect(await api.view(sid)).toEqual(before);
  });
});
