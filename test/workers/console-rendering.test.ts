// What an operator reads is what is there: characters that reorder or hide text
// are shown as code points, and every answer under /console carries the pages' security headers.
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { consoleSecurityHeaders } from "../../src/console/security-headers";
import { complete, reserve, result, suspendedOn, uniqueId } from "../support/api";
import { getPage, ORIGIN, postForm, signedInCookie } from "../support/console";
import { OPERATOR_TOKEN } from "../support/secrets";

let cookie = "";
beforeAll(async () => {
  cookie = await signedInCookie();
});

const HIDDEN = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/;

describe("text that reorders or hides itself", () => {
  it("a command and an output with bidi controls and zero-width marks show each as its code point", async () => {
    const sid = uniqueId("bidi");
    const { tokens } = await suspendedOn(sid, ["h1"]);
    // Reads as "ls safe-file.txt" in a browser that obeys the override: the real name is reversed.
    const command = "rm -rf ~/\u202Etxt.elif-efas\u202C \u2066ok\u2069";
    await reserve(sid, "h2", command);
    await complete(sid, "h1", tokens.h1!, result(0, "pay\u200Bpal \u202Edlrow\u202C done\u2067"));
    const pages = await Promise.all(
      [
        `/console/sessions/default/${sid}`,
        `/console/sessions/default/${sid}/jobs/h2`,
        `/console/sessions/default/${sid}/jobs/h1`,
      ].map(async (path) => (await getPage(path, cookie)).text()),
    );
    for (const html of pages) expect(html).not.toMatch(HIDDEN);
    expect(pages[0]).toContain("[U+202E]</span>txt.elif-efas");
    expect(pages[1]).toContain('[U+202E]</span>txt.elif-efas<span class="hidden-char"');
    expect(pages[1]).toContain("[U+2066]</span>ok");
    expect(pages[2]).toContain("pay<span");
    expect(pages[2]).toContain("[U+200B]</span>pal");
  });
});

/** Every answer under /console a caller can provoke, signed in or not. */
const answers: Array<[string, () => Promise<Response>]> = [
  ["the sign-in page (401)", () => getPage("/console", "")],
  ["a page (200)", () => getPage("/console", cookie)],
  ["an unknown console path (404)", () => getPage("/console/no-such-page", cookie)],
  ["an unknown action (404)", () => getPage("/console/sessions/default/x/confirm/bogus", cookie)],
  ["a sign-in (303)", () => postForm("/console/sign-in", { token: OPERATOR_TOKEN })],
  [
    "a wrong token (401)",
    () => postForm("/console/sign-in", { token: "wrong" }, { client: "192.0.2.77" }),
  ],
  [
    "a POST from another origin (403)",
    () => postForm("/console/sign-out", {}, { cookie, origin: "https://evil.example" }),
  ],
  ["a POST without its form token (403)", () => postForm("/console/sign-out", {}, { cookie })],
  [
    "a method the path does not take (405)",
    () => exports.default.fetch(new Request(`${ORIGIN}/console`, { method: "PUT" })),
  ],
  [
    "a declared oversized body (413 problem)",
    () =>
      exports.default.fetch(
        new Request(`${ORIGIN}/console/sign-in`, {
          method: "POST",
          headers: { "content-length": String(3 * 1024 * 1024), origin: ORIGIN },
          body: "x",
        }),
      ),
  ],
];

describe("every console answer", () => {
  it("carries the same security headers as a console page, whatever its status", async () => {
    const expected = consoleSecurityHeaders(null);
    const statuses: number[] = [];
    for (const [what, answer] of answers) {
      const response = await answer();
      statuses.push(response.status);
      const got = Object.fromEntries(
        Object.keys(expected).map((name) => [name, response.headers.get(name)]),
      );
      // A page allows its own nonce's script; every other answer allows none.
      const csp = (got["content-security-policy"] ?? "").replace(/'nonce-[^']+'/, "'none'");
      expect([what, { ...got, "content-security-policy": csp }]).toEqual([what, expected]);
    }
    expect(statuses).toEqual([401, 200, 404, 404, 303, 401, 403, 403, 405, 413]);
  });
});
