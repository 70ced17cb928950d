// A session names its runner: the URL held to the runner allowlist on its parsed form, the token
// write-only — no answer, audit event, index entry or console page shows it.
import { describe, expect, it } from "vitest";
import { call, uniqueId } from "../support/api";
import { getPage, signedInCookie } from "../support/console";
import { GLOBEX_AGENT_TOKEN, OPERATOR_TOKEN } from "../support/secrets";

const TOKEN = "runner-secret-9f8e7d6c5b4a";
const runner = (url = "http://runner.test", token = TOKEN) => ({ url, token });

describe("a session's runner", () => {
  it("a session created with a runner shows its URL, never its token, in every answer", async () => {
    const sid = uniqueId("runner-create");
    const created = await call("POST", "/v1/sessions", { body: { id: sid, runner: runner() } });
    expect(created.status).toBe(201);
    expect(created.body.runner).toEqual({ url: "http://runner.test/" });
    const seen = await call("GET", `/v1/sessions/${sid}`);
    expect(seen.body.runner).toEqual({ url: "http://runner.test/" });
    for (const answer of [created, seen]) expect(JSON.stringify(answer.body)).not.toContain(TOKEN);
  });

  it("a session created without a runner shows runner null", async () => {
    const sid = uniqueId("runner-none");
    const created = await call("POST", "/v1/sessions", { body: { id: sid } });
    expect(created.body.runner).toBeNull();
  });

  it("PUT …/runner replaces the runner and null removes it, answering the view", async () => {
    const sid = uniqueId("runner-put");
    await call("POST", "/v1/sessions", { body: { id: sid, runner: runner() } });
    const replaced = await call("PUT", `/v1/sessions/${sid}/runner`, {
      body: runner("http://127.0.0.1:9001/base", "another-token"),
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.runner).toEqual({ url: "http://127.0.0.1:9001/base" });
    expect(JSON.stringify(replaced.body)).not.toContain("another-token");
    const removed = await call("PUT", `/v1/sessions/${sid}/runner`, { body: null });
    expect(removed.status).toBe(200);
    expect(removed.body.runner).toBeNull();
    expect((await call("GET", `/v1/sessions/${sid}`)).body.runner).toBeNull();
  });

  it("a runner URL off the allowlist, with user info, a query or a fragment, or not http(s) is refused with 422 and nothing is stored", async () => {
    const sid = uniqueId("runner-refused");
    const refusedCreate = await call("POST", "/v1/sessions", {
      body: { id: sid, runner: runner("http://evil.test") },
    });
    expect(refusedCreate.status).toBe(422);
    expect(refusedCreate.body.code).toBe("invalid_request");
    expect(refusedCreate.body.detail).toContain("RUNNER_URL_ALLOWLIST");
    expect((await call("GET", `/v1/sessions/${sid}`)).status).toBe(404);

    await call("POST", "/v1/sessions", { body: { id: sid, runner: runner() } });
    const refused = [
      runner("http://evil.test"),
      runner("http://user:pw@runner.test"),
      runner("ftp://runner.test"),
      runner("not a url"),
      runner("http://runner.test/?tenant=other"),
      runner("http://runner.test/base#frag"),
      runner("http://runner.test", "has space"),
      runner("http://runner.test", ""),
      { url: "http://runner.test" },
      { ...runner(), extra: 1 },
      "http://runner.test",
    ];
    for (const body of refused) {
      const answer = await call("PUT", `/v1/sessions/${sid}/runner`, { body });
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body.code).toBe("invalid_request");
      expect(JSON.stringify(answer.body)).not.toContain("pw@");
    }
    const userInfo = await call("PUT", `/v1/sessions/${sid}/runner`, {
      body: runner("http://user:pw@runner.test"),
    });
    expect(userInfo.body.detail).toContain("user info");
    expect((await call("GET", `/v1/sessions/${sid}`)).body.runner).toEqual({
      url: "http://runner.test/",
    });
  });

  it("a tenant's own runner allowlist replaces the deployment's", async () => {
    const sid = uniqueId("runner-tenant");
    const global = await call("POST", "/v1/sessions", {
      token: GLOBEX_AGENT_TOKEN,
      body: { id: sid, runner: runner() },
    });
    expect(global.status).toBe(422);
    expect(global.body.detail).toContain("not in");
    const own = await call("POST", "/v1/sessions", {
      token: GLOBEX_AGENT_TOKEN,
      body: { id: sid, runner: runner("http://globex-runner.test") },
    });
    expect(own.status).toBe(201);
    expect(own.body.runner).toEqual({ url: "http://globex-runner.test/" });
  });

  it("PUT …/runner of an unknown session or another tenant's is 404", async () => {
    const sid = uniqueId("runner-404");
    expect((await call("PUT", `/v1/sessions/${sid}/runner`, { body: runner() })).status).toBe(404);
    await call("POST", "/v1/sessions", { body: { id: sid } });
    const other = await call("PUT", `/v1/sessions/${sid}/runner`, {
      token: GLOBEX_AGENT_TOKEN,
      body: runner("http://globex-runner.test"),
    });
    expect(other.status).toBe(404);
    expect((await call("GET", `/v1/sessions/${sid}`)).body.runner).toBeNull();
  });

  it("the token shows in no audit event, index entry or console page", async () => {
    const sid = uniqueId("runner-hidden");
    await call("POST", "/v1/sessions", { body: { id: sid, runner: runner() } });
    await call("PUT", `/v1/sessions/${sid}/runner`, { body: runner("http://runner.test/v2") });
    const events = await call("GET", `/v1/ops/sessions/default/${sid}/events`, {
      token: OPERATOR_TOKEN,
    });
    const entry = await call("GET", `/v1/ops/sessions/default/${sid}`, { token: OPERATOR_TOKEN });
    const list = await call("GET", "/v1/ops/sessions?tenant=default", { token: OPERATOR_TOKEN });
    const page = await getPage(`/console/sessions/default/${sid}`, await signedInCookie());
    expect(events.status).toBe(200);
    expect(entry.status).toBe(200);
    expect(page.status).toBe(200);
    const shown = [
      JSON.stringify(events.body),
      JSON.stringify(entry.body),
      JSON.stringify(list.body),
      await page.text(),
    ];
    for (const text of shown) expect(text).not.toContain(TOKEN);
  });
});
