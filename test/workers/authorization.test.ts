// The Authorization header: exactly one bearer credential, or a problem+json 401 that names a known
// token of the wrong kind.
import { describe, expect, it } from "vitest";
import { type Answer, call, createSession, reserve, uniqueId, view } from "../support/api";
import { ACME_AGENT_TOKEN, AGENT_TOKEN, OPERATOR_TOKEN } from "../support/secrets";

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

describe("a known token of the wrong kind is named in the 401's detail, never echoed", () => {
  const done = { status: "completed", exit_code: 0, output: "x" };
  const completion = (sid: string, handle: string, token: string | null) =>
    call("POST", `/v1/sessions/${sid}/exec-jobs/${handle}/completion`, { token, body: done });
  const refusedAs = (answer: Answer, detail: string, token: string | null) => {
    expect([answer.status, answer.body.code, answer.body.detail]).toEqual([
      401,
      "unauthorized",
      detail,
    ]);
    expect(answer.headers.get("www-authenticate")).toBe("Bearer");
    if (token !== null) expect(JSON.stringify(answer.body)).not.toContain(token);
  };

  it("a completion sent with an agent or operator token says which it is, and the job stays running", async () => {
    const sid = uniqueId("completion-kinds");
    await createSession(sid);
    await reserve(sid, "h");
    const takes = "a completion or heartbeat takes the job's callback token from its reservation";
    for (const token of [AGENT_TOKEN, ACME_AGENT_TOKEN]) {
      refusedAs(await completion(sid, "h", token), `this is an agent token; ${takes}`, token);
    }
    refusedAs(
      await completion(sid, "h", OPERATOR_TOKEN),
      `this is an operator token; ${takes}`,
      OPERATOR_TOKEN,
    );
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs/h`)).body.status).toBe("running");
  });

  it("a completion with the callback token of another job or session says so, and completes neither", async () => {
    const sid = uniqueId("completion-other-job");
    const other = uniqueId("completion-other-session");
    await createSession(sid);
    await createSession(other);
    await reserve(sid, "h");
    const sibling = (await reserve(sid, "h2")).callback.token;
    const stranger = (await reserve(other, "h")).callback.token;
    const detail =
      "this is the callback token of another job; a completion takes the callback token of the job it completes, from its reservation";
    refusedAs(await completion(sid, "h", sibling), detail, sibling);
    refusedAs(await completion(sid, "h", stranger), detail, stranger);
    for (const [session, handle] of [
      [sid, "h"],
      [sid, "h2"],
      [other, "h"],
    ]) {
      const job = await call("GET", `/v1/sessions/${session}/exec-jobs/${handle}`);
      expect([session, handle, job.body.status]).toEqual([session, handle, "running"]);
    }
  });

  it("a forged, missing or malformed token keeps the detail it had", async () => {
    const sid = uniqueId("completion-forged");
    await createSession(sid);
    await reserve(sid, "h");
    for (const token of [null, "forged", "eib3.e30.c2ln"]) {
      refusedAs(
        await completion(sid, "h", token),
        "missing or invalid callback token for this job",
        token,
      );
      refusedAs(
        await call("GET", `/v1/sessions/${sid}`, { token }),
        "missing or invalid agent token",
        token,
      );
      refusedAs(
        await call("GET", "/v1/ops/sessions", { token }),
        "missing or invalid operator token",
        token,
      );
    }
  });

  it("an operator or callback token on an agent route says which it is, and changes nothing", async () => {
    const sid = uniqueId("agent-route-kinds");
    await createSession(sid);
    const { callback } = await reserve(sid, "h");
    const before = await view(sid);
    const message = { role: "user", content: "hello" };
    const asOperator = await call("POST", `/v1/sessions/${sid}/messages`, {
      token: OPERATOR_TOKEN,
      body: message,
    });
    refusedAs(
      asOperator,
      "this is an operator token; agent routes take an AGENT_TOKENS token",
      OPERATOR_TOKEN,
    );
    const asRunner = await call("POST", `/v1/sessions/${sid}/messages`, {
      token: callback.token,
      body: message,
    });
    refusedAs(
      asRunner,
      "this is a callback token; it opens only its job's completion and heartbeat (POST …/exec-jobs/{handle}/completion, …/heartbeat)",
      callback.token,
    );
    expect(await view(sid)).toEqual(before);
  });

  it("an agent or callback token on /v1/ops says which it is, and the operator action is not taken", async () => {
    const sid = uniqueId("ops-route-kinds");
    await createSession(sid);
    const { callback } = await reserve(sid, "h");
    const markLost = `/v1/ops/sessions/default/${sid}/exec-jobs/h/mark-lost`;
    const takes = "/v1/ops routes take an OPERATOR_TOKENS token";
    refusedAs(
      await call("POST", markLost, { token: AGENT_TOKEN }),
      `this is an agent token; ${takes}`,
      AGENT_TOKEN,
    );
    refusedAs(
      await call("POST", markLost, { token: callback.token }),
      `this is a callback token; ${takes}`,
      callback.token,
    );
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs/h`)).body.status).toBe("running");
  });

  it("a token of another tenant still gets 404 for a session, never a word about its kind", async () => {
    const sid = uniqueId("tenant-kinds");
    await createSession(sid);
    const answer = await call("GET", `/v1/sessions/${sid}`, { token: ACME_AGENT_TOKEN });
    expect([answer.status, answer.body.code, answer.body.detail]).toEqual([
      404,
      "not_found",
      (await call("GET", `/v1/sessions/${uniqueId("nobody")}`)).body.detail,
    ]);
  });
});
