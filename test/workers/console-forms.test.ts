import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createSession, uniqueId } from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

const OPERATOR = OPERATOR_TOKEN;
const ORIGIN = "http://exec-inbox.test";
const COOKIE = `exec_inbox_operator=${OPERATOR}`;

/** A browser's form POST; the redirect is the answer, not followed. */
const post = (path: string, form: Record<string, string>) =>
  exports.default.fetch(
    new Request(`${ORIGIN}${path}`, {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams(form),
      headers: { origin: ORIGIN, cookie: COOKIE },
    }),
  );

const page = async (path: string): Promise<string> =>
  (await call("GET", path, { token: null, headers: { cookie: COOKIE } })).body;

const formTokenOf = (html: string): string =>
  /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? "";

describe("console forms carry the operator's form token", () => {
  it("a same-origin POST without the form token, or with a wrong one, is refused and changes nothing", async () => {
    const sid = uniqueId("forged");
    await createSession(sid);
    const path = `/console/sessions/default/${sid}/actions/delete`;
    expect((await post(path, {})).status).toBe(403);
    expect((await post(path, { form_token: "not-the-token" })).status).toBe(403);
    expect((await call("GET", `/v1/sessions/${sid}`)).status).toBe(200);
  });

  it("the confirmation page's form token deletes the session, and every console form carries it", async () => {
    const sid = uniqueId("confirmed");
    await createSession(sid);
    const confirm = await page(`/console/sessions/default/${sid}/confirm/delete`);
    const token = formTokenOf(confirm);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const forms = [...confirm.matchAll(/<form method="post"[\s\S]*?<\/form>/g)].map((m) => m[0]);
    expect(forms).toHaveLength(2);
    for (const form of forms) expect(form).toContain(`value="${token}"`);
    const answer = await post(`/console/sessions/default/${sid}/actions/delete`, {
      form_token: token,
    });
    expect(answer.status).toBe(303);
    expect((await call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
  });

  it("signing out needs the form token too, while signing in needs none", async () => {
    expect((await post("/console/sign-out", {})).status).toBe(403);
    const token = formTokenOf(await page("/console"));
    expect((await post("/console/sign-out", { form_token: token })).status).toBe(303);
    expect((await post("/console/sign-in", { token: OPERATOR })).status).toBe(303);
  });
});
