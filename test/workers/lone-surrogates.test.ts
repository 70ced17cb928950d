// Strings a JSON body may carry: a lone surrogate (`\ud800` in the JSON text) is no
// Unicode text, storage cannot keep it, and an identical retry must still be a duplicate.
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

/** The JSON text exactly as the attack sent it: the surrogate as a `\ud800` escape. */
const escaped = (body: unknown): string => JSON.stringify(body);

const send = (method: string, path: string, body: unknown, token?: string) =>
  api.call(method, path, {
    raw: escaped(body),
    headers: { "content-type": "application/json" },
    ...(token === undefined ? {} : { token }),
  });

function expectRefusedAt(answer: api.Answer, path: string) {
  expect([answer.status, answer.body.code]).toEqual([422, "invalid_request"]);
  expect(answer.headers.get("content-type")).toBe("application/problem+json");
  expect(answer.body.errors).toEqual([{ path, message: expect.stringMatching(/lone surrogate/) }]);
}

describe("a lone surrogate in a JSON body is refused before anything is stored", () => {
  it("a completion whose output holds \\ud800 gets 422, and so does its identical retry; the job stays running", async () => {
    const sid = api.uniqueId("surrogate-done");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    const body = api.result(0, "before \ud800 after");
    expect(escaped(body)).toContain("\\ud800");
    const path = `/v1/sessions/${sid}/exec-jobs/h1/completion`;
    const jobPath = `/v1/sessions/${sid}/exec-jobs/h1`;
    const before = (await api.call("GET", jobPath)).body;
    expectRefusedAt(await send("POST", path, body, token), "output");
    expectRefusedAt(await send("POST", path, body, token), "output");
    const after = (await api.call("GET", jobPath)).body;
    expect([after, after.status]).toEqual([before, "running"]);
    // The runner's fix (text decoded from bytes) then goes through, and its retry is a duplicate.
    const fixed = api.result(0, "before \ufffd after");
    expect((await send("POST", path, fixed, token)).status).toBe(202);
    expect((await send("POST", path, fixed, token)).status).toBe(200);
  });

  it("a reservation whose command holds a lone low surrogate gets 422 and reserves nothing", async () => {
    const sid = api.uniqueId("surrogate-job");
    await api.createSession(sid);
    const body = { handle: "h1", command: "echo \udc00" };
    expectRefusedAt(await send("POST", `/v1/sessions/${sid}/exec-jobs`, body), "command");
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).status).toBe(404);
  });

  it("a message with a lone surrogate in its content, a nested value or a member name gets 422 and appends nothing", async () => {
    const sid = api.uniqueId("surrogate-msg");
    await api.createSession(sid);
    const path = `/v1/sessions/${sid}/messages`;
    const cases: [unknown, string][] = [
      [{ role: "user", content: "hi \ud83d" }, "content"],
      [{ role: "tool", content: [{ type: "text", text: ["ok", "\ud800"] }] }, "content.0.text.1"],
      [{ role: "user", content: "hi", metadata: { "key\udfff": 1 } }, "metadata"],
    ];
    for (const [body, at] of cases) expectRefusedAt(await send("POST", path, body), at);
    expect((await api.call("GET", path)).body.messages).toEqual([]);
  });

  it("a surrogate pair (an emoji) is text: stored as sent, and an identical completion is a duplicate", async () => {
    const sid = api.uniqueId("surrogate-pair");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    const body = api.result(0, "done \ud83d\ude00");
    const path = `/v1/sessions/${sid}/exec-jobs/h1/completion`;
    expect((await send("POST", path, body, token)).status).toBe(202);
    expect((await send("POST", path, body, token)).status).toBe(200);
    const job = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body;
    expect(job.output).toBe("done 😀");
  });
});
