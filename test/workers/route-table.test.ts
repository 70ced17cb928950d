import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app";
import { SCALAR_SCRIPT_PATH } from "../../src/http/reference-version";
import { call, createSession, uniqueId } from "../support/api";

describe("the API reference", () => {
  it("/docs answers an HTML page, without a token, that renders the document at /openapi.json and says where it is when the viewer does not start", async () => {
    const answer = await call("GET", "/docs", { token: null });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^text\/html/);
    expect(answer.body).toContain('"url":"/openapi.json"');
    expect(answer.body).toMatch(
      /<p id="reference-fallback"[^>]*>Loading the API reference…[^<]*<a href="\/openapi.json">/,
    );
    expect(answer.body).toMatch(/<noscript>.*<a href="\/openapi.json">\/openapi.json<\/a>/);
  });

  it("/docs loads the installed Scalar bundle from this origin only, under a strict policy", async () => {
    const answer = await call("GET", "/docs", { token: null });
    const scripts = [...answer.body.matchAll(/<script\b[^>]*>/g)].map((tag) => tag[0]);
    const external = scripts.filter((tag) => tag.includes(" src="));
    expect(external).toHaveLength(1);
    expect(external[0]).toContain(` src="${SCALAR_SCRIPT_PATH}"`);
    expect(answer.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    const policy = answer.headers.get("content-security-policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(policy)?.[1];
    expect(nonce).toBeDefined();
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    const directives = Object.fromEntries(
      policy.split("; ").map((part) => [part.split(" ")[0], part.split(" ").slice(1).join(" ")]),
    );
    expect(directives["default-src"]).toBe("'none'");
    expect(directives["script-src"]).toBe(`'nonce-${nonce}'`);
    expect(directives["connect-src"]).toBe("'self'");
    expect(directives["frame-ancestors"]).toBe("'none'");
    expect(directives["base-uri"]).toBe("'none'");
    expect(directives["object-src"]).toBe("'none'");
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(answer.headers.get("referrer-policy")).toBe("no-referrer");
    expect(answer.headers.get("x-frame-options")).toBe("DENY");
    const again = await call("GET", "/docs", { token: null });
    expect(again.headers.get("content-security-policy")).not.toContain(`'nonce-${nonce}'`);
  });

  it("the bundle answers from the static assets as versioned JavaScript, and nothing else of that directory does", async () => {
    const script = await call("GET", SCALAR_SCRIPT_PATH, { token: null });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(script.body).toContain("createApiReference");
    for (const path of ["/standalone.js", "/webpack-stats.json"]) {
      expect((await call("GET", path, { token: null })).status).toBe(404);
    }
  });

  it("the document is generated from the route table: every operation has an id and answers", async () => {
    const { body } = await call("GET", "/openapi.json", { token: null });
    const operations = Object.values<Record<string, { operationId: string; responses: object }>>(
      body.paths,
    ).flatMap((item) => Object.values(item));
    expect(operations).toHaveLength(38);
    const ids = operations.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(body.webhooks["session.resume"].post.requestBody.required).toBe(true);
    expect(Object.keys(body.components.securitySchemes).sort()).toEqual([
      "agentToken",
      "callbackToken",
      "operatorToken",
    ]);
  });
});

/** Every object schema with declared properties under `node` whose other properties are allowed. */
function openObjects(node: unknown, where: string, found: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) openObjects(item, `${where}/${i}`, found);
  } else if (node !== null && typeof node === "object") {
    const schema = node as Record<string, unknown>;
    if (schema.properties !== undefined && schema.additionalProperties !== false) found.push(where);
    for (const [key, value] of Object.entries(schema)) openObjects(value, `${where}/${key}`, found);
  }
  return found;
}

describe("the route table is the only way into /v1", () => {
  it("every /v1 route the app registers is an operation of the document, and the other way round", async () => {
    const registered = new Set(
      createApp()
        .routes.filter((route) => route.path.startsWith("/v1/") && route.method !== "ALL")
        .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`),
    );
    const { body } = await call("GET", "/openapi.json", { token: null });
    const documented = new Set(
      Object.entries<object>(body.paths)
        .filter(([path]) => path.startsWith("/v1/"))
        .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    expect([...registered].sort()).toEqual([...documented].sort());
    expect(registered.size).toBeGreaterThan(20);
  });
});

describe("the document lists only answers an operation can give", () => {
  it("an operation without a path id documents no 404", async () => {
    const { body } = await call("GET", "/openapi.json", { token: null });
    const with404 = Object.entries<Record<string, { responses: object }>>(body.paths)
      .filter(([path]) => !path.includes("{"))
      .flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([, operation]) => "404" in operation.responses)
          .map(([method]) => `${method} ${path}`),
      );
    expect(with404).toEqual([]);
  });
});

describe("query parameters are documented as what a query string can carry", () => {
  it("no query parameter is nullable, and ?after=null is refused", async () => {
    const { body } = await call("GET", "/openapi.json", { token: null });
    const nullable = Object.entries<Record<string, { parameters?: any[] }>>(body.paths).flatMap(
      ([path, item]) =>
        Object.values(item).flatMap((operation) =>
          (operation.parameters ?? [])
            .filter((p) => p.in === "query" && JSON.stringify(p.schema).includes("null"))
            .map((p) => `${path}?${p.name}`),
        ),
    );
    expect(nullable).toEqual([]);
    const sid = uniqueId("null-after");
    await createSession(sid);
    const answer = await call("GET", `/v1/sessions/${sid}/messages?after=null`);
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe("invalid_request");
    expect((await call("GET", `/v1/sessions/${sid}/messages?after=0&before=5`)).status).toBe(200);
  });
});

describe("headers the problem answers carry are documented", () => {
  it("every 401 documents WWW-Authenticate: Bearer, and a refused token gets it", async () => {
    const { body } = await call("GET", "/openapi.json", { token: null });
    const unauthorized = Object.values<Record<string, { responses: Record<string, any> }>>(
      body.paths,
    ).flatMap((item) => Object.values(item).flatMap((op) => op.responses["401"] ?? []));
    expect(unauthorized.length).toBeGreaterThan(20);
    for (const response of unauthorized) {
      expect(response.headers["www-authenticate"]).toMatchObject({
        required: true,
        schema: { type: "string", enum: ["Bearer"] },
      });
    }
    const refused = await call("GET", "/v1/sessions/any", { token: "forged" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe("Bearer");
  });
});

describe("answers the document describes are closed", () => {
  it("every answer and webhook schema refuses properties it does not name", async () => {
    const { body } = await call("GET", "/openapi.json", { token: null });
    const answers = Object.entries<Record<string, { responses: object }>>(body.paths)
      // The document's own answer is the OpenAPI document: open by nature.
      .filter(([path]) => path !== "/openapi.json")
      .flatMap(([path, item]) =>
        Object.entries(item).map(([method, operation]) =>
          openObjects(operation.responses, `${method} ${path}`),
        ),
      );
    expect(answers.flat()).toEqual([]);
    expect(openObjects(body.components.schemas, "components")).toEqual([]);
    expect(openObjects(body.webhooks, "webhooks")).toEqual([]);
  });

  it("a completion's 202 and 200 answers are separate schemas: accepted, and duplicate", async () => {
    const { body } = await call("GET", "/openapi.json", { token: null });
    const completion = body.paths["/v1/sessions/{sid}/exec-jobs/{handle}/completion"].post;
    const schemaOf = (status: string) =>
      completion.responses[status].content["application/json"].schema.$ref;
    expect(schemaOf("202")).toBe("#/components/schemas/CompletionAccepted");
    expect(schemaOf("200")).toBe("#/components/schemas/CompletionDuplicate");
    expect(body.components.schemas.CompletionDuplicate.properties.outcome.enum).toEqual([
      "duplicate",
    ]);
  });
});

describe("requests the route table's validators see through our own body reader", () => {
  it("a JSON content type written with spaces or a structured suffix is read, not refused", async () => {
    const sid = uniqueId("types");
    for (const type of ["application/json ; charset=utf-8", "application/a+b+json"]) {
      const answer = await call("POST", "/v1/sessions", {
        raw: JSON.stringify({ id: `${sid}-${type.length}` }),
        headers: { "content-type": type },
      });
      expect(answer.status, type).toBe(201);
    }
  });

  it("an optional body sent empty and without a content type gets the schema's defaults", async () => {
    const sid = uniqueId("defaults");
    await createSession(sid);
    const answer = await call("POST", `/v1/sessions/${sid}/inbox/claim`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ claims: [] });
    const run = await call("POST", `/v1/sessions/${sid}/runs`);
    expect(run.status).toBe(201);
    expect(run.body.run_id).toMatch(/.+/);
  });

  it("a query key given more than once is refused by name, and nothing is read", async () => {
    const sid = uniqueId("repeated");
    await createSession(sid);
    const answer = await call("GET", `/v1/sessions/${sid}/messages?limit=1&after=0&limit=2`);
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      code: "invalid_request",
      detail: "limit: given more than once: send it once",
      errors: [{ path: "limit", message: "given more than once: send it once" }],
    });
    const once = await call("GET", `/v1/sessions/${sid}/messages?limit=1&after=0`);
    expect(once.status).toBe(200);
  });

  it("a malformed path id is not found before its body is read", async () => {
    const answer = await call("POST", "/v1/sessions/a%20b/messages", {
      raw: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe("not_found");
  });
});
