// The Authorization header: exactly one bearer credential, or a problem+json 401.
import { describe, expect, it } from "vitest";
import { call, createSession, reserve, uniqueId } from "../support/api";
import { AGENT_TOKEN } from "../support/secrets";

describe("the Authorization header", () => {
  it("two Authorization headers get a problem+json 401 on agent routes, even when both are valid", async () => {
    const sid = uniqueId("two-headers");
    await createSession(sid);
    const headers = new Headers();
    headers.append("authorization", `Bearer ${AGENT_TOKEN}`);
    headers.append("authorization", `Bearer ${AGENT_TOKEN}`);
    const answer = await call("GET", `/v1/sessions/${sid}`, {
      token: null,
      headers: Object.fromEntries(headers),
    });
    expect([answer.status, answer.body.code]).toEqual([401, "unauthorized"]);
    expect(answer.headers.get("content-type")).toContain("application/problem+json");
    expect(answer.body.detail).toContain("exactly one");
  });

  it("two Authorization headers on a completion are refused before the body is read, and change nothing", async () => {
    const sid = uniqueId("two-callback-headers");
    await createSession(sid);
    const { callback } = await reserve(sid, "h");
    const answer = await call("POST", `/v1/sessions/${sid}/exec-jobs/h/completion`, {
      token: null,
      headers: { authorization: `Bearer ${callback.token}, Bearer ${callback.token}` },
      body: { status: "completed", exit_code: 0, output: "x" },
    });
    expect([answer.status, answer.body.code]).toEqual([401, "unauthorized"]);
    expect(answer.body.detail).toContain("exactly one");
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs/h`)).body.status).toBe("running");
  });

  it("a scheme other than Bearer, or no token, is a 401", async () => {
    for (const value of ["Basic dGVzdA==", "Bearer", "Bearer  ", AGENT_TOKEN]) {
      const answer = await call("GET", "/v1/sessions/x", {
        token: null,
        headers: { authorization: value },
      });
      expect([value, answer.status, answer.body.code]).toEqual([value, 401, "unauthorized"]);
    }
  });
});
