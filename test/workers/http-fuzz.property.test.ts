import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";
import * as api from "../support/api";
import { AGENT_TOKEN } from "../support/secrets";

const ROUTES = [
  ["POST", "/v1/sessions"],
  ["POST", "/v1/sessions/{sid}/messages"],
  ["POST", "/v1/sessions/{sid}/runs"],
  ["POST", "/v1/sessions/{sid}/runs/{run}/suspend"],
  ["POST", "/v1/sessions/{sid}/runs/{run}/finish"],
  ["POST", "/v1/sessions/{sid}/exec-jobs"],
  ["POST", "/v1/sessions/{sid}/exec-jobs/h1/completion"],
  ["POST", "/v1/sessions/{sid}/exec-jobs/h1/heartbeat"],
  ["POST", "/v1/sessions/{sid}/inbox/claim"],
  ["POST", "/v1/sessions/{sid}/inbox/ack"],
] as const;

const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 12 }), tie("value"), { maxKeys: 5 }),
  ),
})).value;

const fieldNames = fc.constantFrom(
  "id",
  "role",
  "content",
  "waiting_for",
  "wake",
  "ceiling_ms",
  "handle",
  "command",
  "status",
  "exit_code",
  "output",
  "max",
  "lease_ms",
  "ids",
  "run_id",
  "resume_id",
  "__proto__",
  "constructor",
);

/** Bodies that look almost right: known field names with wrong or odd values, and raw garbage. */
const body = fc.oneof(
  fc
    .dictionary(fieldNames, jsonValue, { maxKeys: 6 })
    .map((value) => ({ raw: JSON.stringify(value), type: "application/json" })),
  fc.string({ maxLength: 200 }).map((raw) => ({ raw, type: "application/json" })),
  fc
    .uint8Array({ maxLength: 64 })
    .map((bytes) => ({ raw: new Uint8Array([0x7b, 0x22, ...bytes]), type: "application/json" })),
  fc.integer({ min: 1, max: 2000 }).map((depth) => ({
    raw: `${"[".repeat(depth)}${"]".repeat(depth)}`,
    type: "application/json",
  })),
  fc
    .constantFrom(
      "text/plain",
      "application/xml",
      "multipart/form-data",
      "application/json-patch",
      "",
    )
    .map((type) => ({ raw: '{"id":"x"}', type })),
  fc.constant({ raw: `{"id":"${"x".repeat(100_000)}"}`, type: "application/json" }),
);

const pathId = fc.constantFrom(
  "..",
  "%2e%2e",
  "a%2Fb",
  "%00",
  "é",
  "%F0%9F%98%80",
  " ",
  "a b",
  "x".repeat(129),
  "%2e",
);

describe("an HTTP fuzz over every route", () => {
  it("answers every malformed request with a 4xx problem+json and changes nothing", async () => {
    const sid = api.uniqueId("fuzz");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    await api.registerRun(sid);
    const before = await api.view(sid);
    const messagesBefore = (await api.call("GET", `/v1/sessions/${sid}/messages`)).body;
    const codes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        body,
        fc.boolean(),
        async ([method, template], input, useJobToken) => {
          const path = template.replace("{sid}", sid).replace("{run}", "fuzz-run");
          const headers: Record<string, string> =
            input.type === "" ? {} : { "content-type": input.type };
          const token =
            (path.endsWith("/completion") || path.endsWith("/heartbeat")) && useJobToken
              ? job.callback.token
              : undefined;
          const answer = await api.call(method, path, { raw: input.raw, headers, token });
          if (answer.status < 400) return; // Some bodies are valid by chance (e.g. `{}` for a claim on another run).
          expect(answer.status).toBeLessThan(500);
          expect(answer.headers.get("content-type")).toBe("application/problem+json");
          expect(typeof answer.body.code).toBe("string");
          codes.add(answer.body.code);
        },
      ),
      // `npm run fuzz` runs 25 batches of these with other seeds (10,000 requests).
      { numRuns: inject("fuzzRuns"), seed: inject("fuzzSeed") },
    );
    // Valid-by-chance requests can only have changed a fuzz-run or a non-session route; this session holds.
    const after = await api.view(sid);
    expect(after.message_count).toBe(before.message_count);
    expect((await api.call("GET", `/v1/sessions/${sid}/messages`)).body).toEqual(messagesBefore);
    expect(after.inbox).toEqual(before.inbox);
    expect(after.run).toEqual(before.run);
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.status).toBe("running");
    expect(
      [...codes].every((code) =>
        [
          "unauthorized",
          "not_found",
          "invalid_request",
          "unsupported_media_type",
          "payload_too_large",
          "session_exists",
          "invalid_transition",
          "run_conflict",
          "job_conflict",
        ].includes(code),
      ),
    ).toBe(true);
  }, 120_000);

  it("odd path ids never reach a session and never answer 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(pathId, fc.constantFrom(...ROUTES), async (id, [method, template]) => {
        const path = template.replace("{sid}", id).replace("{run}", id);
        const answer = await api.call(method, path, { body: {} });
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(answer.status).toBeLessThan(500);
        expect(answer.headers.get("content-type")).toBe("application/problem+json");
      }),
      { numRuns: 150, seed: 1 },
    );
  }, 60_000);

  it("a duplicated Authorization header is refused", async () => {
    const sid = api.uniqueId("dup-header");
    await api.createSession(sid);
    const headers = new Headers();
    headers.append("authorization", `Bearer ${AGENT_TOKEN}`);
    headers.append("authorization", "Bearer wrong");
    const answer = await api.call("GET", `/v1/sessions/${sid}`, {
      token: null,
      headers: Object.fromEntries([["authorization", headers.get("authorization") ?? ""]]),
    });
    expect(answer.status).toBe(401);
  });

  it("a completion replayed after its session was deleted is refused and wakes nothing", async () => {
    const sid = api.uniqueId("replay");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    const body = { status: "completed", exit_code: 0, output: "x" };
    expect((await api.complete(sid, "h1", job.callback.token, body)).status).toBe(202);
    await api.call("DELETE", `/v1/sessions/${sid}`);
    const replayed = await api.complete(sid, "h1", job.callback.token, body);
    expect(replayed.status).toBe(410);
    expect(replayed.body.code).toBe("lifetime_ended");
  });
});
