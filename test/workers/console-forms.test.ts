import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  call,
  complete,
  createSession,
  result,
  scriptHost,
  suspendedOn,
  uniqueId,
  until,
  view,
} from "../support/api";
import { signedInCookie } from "../support/console";
import { OPERATOR_TOKEN } from "../support/secrets";

const OPERATOR = OPERATOR_TOKEN;
const ORIGIN = "http://exec-inbox.test";

let COOKIE = "";
beforeAll(async () => {
  COOKIE = await signedInCookie();
});

/** A browser's form POST; the redirect is the answer, not followed. */
const post = (path: string, form: Record<string, string>, cookie = COOKIE) =>
  exports.default.fetch(
    new Request(`${ORIGIN}${path}`, {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams(form),
      headers: { origin: ORIGIN, cookie },
    }),
  );

const page = async (path: string, cookie = COOKIE): Promise<string> =>
  (await call("GET", path, { token: null, headers: { cookie } })).body;

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
    const cookie = await signedInCookie();
    expect((await post("/console/sign-out", {}, cookie)).status).toBe(403);
    const token = formTokenOf(await page("/console", cookie));
    expect((await post("/console/sign-out", { form_token: token }, cookie)).status).toBe(303);
    expect((await post("/console/sign-in", { token: OPERATOR }, "")).status).toBe(303);
  });
});

/** What a reader sees of a page: its text, without tags. */
const textOf = (html: string) => html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

describe("console pages say what is true", () => {
  it("a session suspended with a staged item says the item waits for the wake condition, not that there is nothing to take", async () => {
    const sid = uniqueId("staged");
    const { tokens } = await suspendedOn(sid, ["h1", "h2"]);
    await complete(sid, "h1", tokens.h1!, result(0, "half"));
    const text = textOf(await page(`/console/sessions/default/${sid}`));
    expect(text).toContain("Inbox 1 pending");
    expect(text).toContain(
      "No resume yet: 1 pending inbox item waits until every awaited job has finished (wake all: h2) or the deadline passes; the resume then carries it.",
    );
    expect(text).not.toContain("nothing to take");
  });

  it("a session with nothing pending and no resume still says the agent host has nothing to take", async () => {
    const sid = uniqueId("quiet");
    await createSession(sid);
    const text = textOf(await page(`/console/sessions/default/${sid}`));
    expect(text).toContain("No resume: the agent host has nothing to take.");
  });

  it("an unknown session's page shows only its not-found notice, and does not refresh", async () => {
    const sid = uniqueId("never-made");
    const answer = await call("GET", `/console/sessions/default/${sid}`, {
      token: null,
      headers: { cookie: COOKIE },
    });
    expect(answer.status).toBe(404);
    const html: string = answer.body;
    expect(html).toContain('data-refresh-ms="0"');
    expect(html).not.toContain('id="live-status"');
    const live = html.slice(html.indexOf('<div id="live">'), html.indexOf("</main>"));
    expect(textOf(live).trim()).toBe(
      `${sid} tenant default The session could not be read. Not found: no such session (404 not_found)`,
    );
  });

  it("a resume the agent host never answered says the host could not be reached", async () => {
    const sid = uniqueId("unreachable");
    await scriptHost(sid, [0, 0, 0, 0]);
    const { tokens } = await suspendedOn(sid, ["h1"]);
    await complete(sid, "h1", tokens.h1!, result(0, "x"));
    await until(async () => {
      expect((await view(sid)).resume.last_error).toBe(
        "agent host could not be reached (scripted network failure)",
      );
    });
    expect(textOf(await page(`/console/sessions/default/${sid}`))).toContain(
      "agent host could not be reached",
    );
  });

  it("every empty cell is the same muted dash, on the list and on a session's page", async () => {
    const sid = uniqueId("dashes");
    await scriptHost(sid, [500, 500, 500, 500]);
    const { tokens } = await suspendedOn(sid, ["h1", "h2"]);
    await complete(sid, "h1", tokens.h1!, result(0, "x"));
    await complete(sid, "h2", tokens.h2!, result(0, "y"));
    // The index is written after the answer, the suspended state first, and a wake's entry waits
    // its settle window (5 s): wait until the list shows the session with its wait met.
    let list = "";
    await until(async () => {
      list = await page(`/console?tenant=default`);
      const rowStart = list.indexOf(`<tr data-session="default/${sid}">`);
      expect(rowStart).toBeGreaterThanOrEqual(0);
      const row = list.slice(rowStart, list.indexOf("</tr>", rowStart));
      expect(row).toContain('<td class="mono"><span class="muted">—</span></td>');
    });
    const pages = [await page(`/console/sessions/default/${sid}`), list];
    for (const html of pages) {
      expect(html).toContain('<span class="muted">—</span>');
      expect(html.replaceAll('<span class="muted">—</span>', "")).not.toMatch(/[—–-]\s*</);
    }
  }, 30_000);
});
