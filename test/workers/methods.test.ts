// A method a known path does not take: 405 with Allow, from the route table; OPTIONS and HEAD.
import { describe, expect, it } from "vitest";
import { call, createSession, reserve, uniqueId, view } from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Each documented path with the methods the document gives it, uppercase. */
async function documentedPaths(): Promise<[string, string[]][]> {
  const { body } = await call("GET", "/openapi.json", { token: null });
  return Object.entries<object>(body.paths).map(([path, item]) => [
    path,
    Object.keys(item).map((method) => method.toUpperCase()),
  ]);
}

/** The Allow a path answers with: its methods, HEAD beside GET, and OPTIONS, in one order. */
const allowOf = (methods: string[]): string =>
  ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    .filter(
      (method) =>
        methods.includes(method) ||
        method === "OPTIONS" ||
        (method === "HEAD" && methods.includes("GET")),
    )
    .join(", ");

const concrete = (template: string): string =>
  template.replace("{tenant}", "default").replace(/\{\w+\}/g, "x");

describe("a method a known path does not take", () => {
  it("every path of the route table answers each method it lacks with 405 and the Allow the document gives it", async () => {
    const paths = await documentedPaths();
    expect(paths.length).toBeGreaterThan(20);
    for (const [template, methods] of paths) {
      const allow = allowOf(methods);
      for (const method of METHODS.filter((m) => !methods.includes(m))) {
        const answer = await call(method, concrete(template));
        const where = `${method} ${template}`;
        expect([where, answer.status, answer.headers.get("allow")]).toEqual([where, 405, allow]);
        expect(answer.headers.get("content-type")).toBe("application/problem+json");
        expect(answer.body).toEqual({
          type: "https://exec-inbox.dev/problems/method_not_allowed",
          title: "Method not allowed",
          status: 405,
          detail: `${method} is not served at ${concrete(template)}; it takes ${allow}`,
          code: "method_not_allowed",
        });
      }
    }
  });

  it("GET …/inbox/claim is a 405 that names POST, with or without a token of any kind", async () => {
    for (const token of [undefined, null, "forged", OPERATOR_TOKEN]) {
      const answer = await call("GET", "/v1/sessions/x/inbox/claim", { token });
      expect([answer.status, answer.headers.get("allow")]).toEqual([405, "POST, OPTIONS"]);
      expect(answer.body.detail).toBe(
        "GET is not served at /v1/sessions/x/inbox/claim; it takes POST, OPTIONS",
      );
    }
  });

  it("a path that matches no route is still 404 with a token and 401 without one under /v1", async () => {
    for (const path of ["/v2/nothing", "/v1/sessions/x/inbox/claim/more", "/v1/nothing"]) {
      const answer = await call("GET", path);
      expect([path, answer.status, answer.body.code]).toEqual([path, 404, "not_found"]);
      expect(answer.headers.get("allow")).toBeNull();
    }
    const anonymous = await call("PUT", "/v1/nothing", { token: null });
    expect([anonymous.status, anonymous.body.code]).toEqual([401, "unauthorized"]);
  });

  it("OPTIONS of a known path answers 204 with its Allow and no body; of an unknown path, 404", async () => {
    const answer = await call("OPTIONS", "/v1/sessions/x", { token: null });
    expect([answer.status, answer.headers.get("allow"), answer.body]).toEqual([
      204,
      "GET, HEAD, DELETE, OPTIONS",
      null,
    ]);
    expect((await call("OPTIONS", "/v2/nothing")).status).toBe(404);
  });

  it("HEAD of a GET route is served as the GET without its body; of a POST-only path, 405", async () => {
    const health = await call("HEAD", "/healthz", { token: null });
    expect([health.status, health.body]).toEqual([200, null]);
    const claim = await call("HEAD", "/v1/sessions/x/inbox/claim");
    expect([claim.status, claim.headers.get("allow"), claim.body]).toEqual([
      405,
      "POST, OPTIONS",
      null,
    ]);
  });

  it("a refused method changes nothing: the session, its job and its inbox stay as they were", async () => {
    const sid = uniqueId("wrong-method");
    await createSession(sid);
    const { callback } = await reserve(sid, "h");
    const before = await view(sid);
    const refused = [
      ["GET", `/v1/sessions/${sid}/inbox/claim`],
      ["PUT", `/v1/sessions/${sid}`],
      ["DELETE", `/v1/sessions/${sid}/messages`],
      ["PATCH", `/v1/sessions/${sid}/exec-jobs/h`],
      ["DELETE", `/v1/ops/sessions/default/${sid}/exec-jobs/h/mark-lost`],
    ];
    for (const [method, path] of refused) {
      const body = method === "GET" ? undefined : { max: 1 };
      const answer = await call(method as string, path as string, { body });
      expect([path, answer.status]).toEqual([path, 405]);
    }
    const completion = await call("PUT", `/v1/sessions/${sid}/exec-jobs/h/completion`, {
      token: callback.token,
      body: { status: "completed", exit_code: 0, output: "x" },
    });
    expect([completion.status, completion.headers.get("allow")]).toEqual([405, "POST, OPTIONS"]);
    expect(await view(sid)).toEqual(before);
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs/h`)).body.status).toBe("running");
  });

  it("the document describes the 405 answer once, as a response of its own with Allow", async () => {
    const { body } = await call("GET", "/openapi.json", { token: null });
    const response = body.components.responses.MethodNotAllowed;
    expect(response.headers.allow.required).toBe(true);
    const schema = response.content["application/problem+json"].schema;
    expect(schema.$ref).toBe("#/components/schemas/MethodNotAllowedProblem");
    const problem = body.components.schemas.MethodNotAllowedProblem;
    expect(problem.properties.code.enum).toEqual(["method_not_allowed"]);
    expect(problem.properties.status.const ?? problem.properties.status.enum?.[0]).toBe(405);
    expect(body.info.description).toContain("method_not_allowed");
  });
});
