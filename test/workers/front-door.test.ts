import { describe, expect, it } from "vitest";
import { VERSION } from "../../src/version";
import { call } from "../support/api";

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const LINKS = { console: "/console", docs: "/docs", openapi: "/openapi.json", health: "/healthz" };

const directivesOf = (policy: string): Record<string, string> =>
  Object.fromEntries(
    policy.split("; ").map((part) => [part.split(" ")[0], part.split(" ").slice(1).join(" ")]),
  );

describe("the front door at /", () => {
  it("answers JSON with the version, the health of the Worker and its objects, and the links, for Accept: application/json and for curl", async () => {
    const expected = {
      service: "exec-inbox",
      version: VERSION,
      health: { worker: "ok", durable_object: "ok" },
      links: LINKS,
    };
    for (const accept of ["application/json", "*/*"]) {
      const answer = await call("GET", "/", { token: null, headers: { accept } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      expect(answer.headers.get("vary")).toBe("accept");
      expect(answer.body).toEqual(expected);
    }
  });

  it("answers a browser a small page with the version, the health and the links, under a policy that runs no script", async () => {
    const answer = await call("GET", "/", { token: null, headers: { accept: BROWSER_ACCEPT } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html: string = answer.body;
    expect(html).toContain(`<code>${VERSION}</code>`);
    expect(html).toMatch(/<dt>Worker<\/dt><dd><span class="ok">ok<\/span>/);
    expect(html).toMatch(/<dt>Durable Objects<\/dt><dd><span class="ok">ok<\/span>/);
    for (const href of Object.values(LINKS)) expect(html).toContain(`href="${href}"`);
    expect(html).not.toContain("<script");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const policy = directivesOf(answer.headers.get("content-security-policy") ?? "");
    const nonce = /'nonce-([^']+)'/.exec(policy["style-src"] ?? "")?.[1];
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(policy).toEqual({
      "default-src": "'none'",
      "style-src": `'nonce-${nonce}'`,
      "img-src": "'self'",
      "form-action": "'none'",
      "frame-ancestors": "'none'",
      "base-uri": "'none'",
    });
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(answer.headers.get("x-frame-options")).toBe("DENY");
  });

  it("is an operation of the OpenAPI document, with both of its media types", async () => {
    const { body } = await call("GET", "/openapi.json", { token: null });
    const operation = body.paths["/"].get;
    expect(operation.operationId).toBe("frontDoor");
    expect(Object.keys(operation.responses["200"].content).sort()).toEqual([
      "application/json",
      "text/html",
    ]);
  });

  it("every page of the origin links the one favicon, which answers an SVG that can run nothing", async () => {
    for (const path of ["/", "/docs", "/console"]) {
      const page = await call("GET", path, { token: null, headers: { accept: BROWSER_ACCEPT } });
      expect(page.body).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml"');
    }
    const icon = await call("GET", "/favicon.svg", { token: null });
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(icon.headers.get("content-security-policy")).toMatch(/^default-src 'none'/);
  });
});
