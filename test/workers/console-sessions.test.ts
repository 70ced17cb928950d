// Console sign-in is a server-side session: an opaque id in the cookie, ended by
// sign-out, idleness and age; form tokens bound to it; Secure over HTTPS; throttled sign-ins.
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/console/console-sessions";
import {
  CONSOLE_IDLE_TIMEOUT_MS,
  CONSOLE_SESSION_MAX_MS,
  SIGN_IN_FAILURES_PER_WINDOW,
} from "../../src/domain/console-session";
import { call, createSession, uniqueId } from "../support/api";
import { cookieOf, formTokenOf, getPage, postForm, signedInCookie } from "../support/console";
import { OPERATOR_TOKEN } from "../support/secrets";

const signedInPage = async (cookie: string) => {
  const answer = await getPage("/console", cookie);
  return { status: answer.status, html: await answer.text() };
};

const idHashOf = (cookie: string) => sha256Hex(cookie.split("=")[1] ?? "");

/** Moves one console session `ms` into the past (what waiting that long would do). */
const age = async (cookie: string, column: "last_seen_at" | "created_at", ms: number) =>
  env.INDEX.prepare(`UPDATE console_sessions SET ${column} = ${column} - ?2 WHERE id_hash = ?1`)
    .bind(await idHashOf(cookie), ms)
    .run();

/** Whether the session of `cookie` still has its row. */
const stored = async (cookie: string) =>
  (await env.INDEX.prepare("SELECT 1 AS one FROM console_sessions WHERE id_hash = ?1")
    .bind(await idHashOf(cookie))
    .first()) !== null;

describe("console sessions", () => {
  it("after sign-out the old cookie opens nothing, and its form token deletes nothing, also after the next sign-in", async () => {
    const sid = uniqueId("signed-out");
    await createSession(sid);
    const before = await signedInCookie();
    const confirm = await getPage(`/console/sessions/default/${sid}/confirm/delete`, before);
    const oldFormToken = formTokenOf(await confirm.text());
    expect(oldFormToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const out = await postForm(
      "/console/sign-out",
      { form_token: oldFormToken },
      { cookie: before },
    );
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(/^exec_inbox_operator=;.*Max-Age=0/);

    const replayed = await signedInPage(before);
    expect(replayed.status).toBe(401);
    expect(replayed.html).toContain('name="token"');
    const deleteWithOld = (cookie: string) =>
      postForm(
        `/console/sessions/default/${sid}/actions/delete`,
        { form_token: oldFormToken },
        {
          cookie,
        },
      );
    expect((await deleteWithOld(before)).status).toBe(401);
    const after = await signedInCookie();
    expect(after).not.toBe(before);
    expect((await deleteWithOld(after)).status).toBe(403);
    expect((await call("GET", `/v1/sessions/${sid}`)).status).toBe(200);
  });

  it("signing in again from a signed-in browser ends the earlier session", async () => {
    const first = await signedInCookie();
    const again = await postForm("/console/sign-in", { token: OPERATOR_TOKEN }, { cookie: first });
    expect(again.status).toBe(303);
    const second = cookieOf(again);
    expect(second).not.toBe(first);
    expect([(await signedInPage(first)).status, (await signedInPage(second)).status]).toEqual([
      401, 200,
    ]);
  });

  it("the cookie is an opaque id, not the operator token, and opens no /v1/ops route", async () => {
    const cookie = await signedInCookie();
    const value = cookie.split("=")[1] ?? "";
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(value).not.toContain(OPERATOR_TOKEN);
    expect((await call("GET", "/v1/ops/sessions", { token: value })).status).toBe(401);
    expect((await signedInPage(cookie)).status).toBe(200);
  });

  it("a session idle past the timeout, or older than its lifetime, is over and its row is gone", async () => {
    const idle = await signedInCookie();
    await age(idle, "last_seen_at", CONSOLE_IDLE_TIMEOUT_MS);
    const old = await signedInCookie();
    await age(old, "created_at", CONSOLE_SESSION_MAX_MS);
    const fresh = await signedInCookie();
    expect((await signedInPage(idle)).status).toBe(401);
    expect((await signedInPage(old)).status).toBe(401);
    expect((await signedInPage(fresh)).status).toBe(200);
    expect([await stored(idle), await stored(old), await stored(fresh)]).toEqual([
      false,
      false,
      true,
    ]);
  });

  it("the page's own refresh does not count as activity; the operator's next request does", async () => {
    const cookie = await signedInCookie();
    const lastSeen = async () =>
      (
        await env.INDEX.prepare(
          "SELECT last_seen_at AS at FROM console_sessions WHERE id_hash = ?1",
        )
          .bind(await idHashOf(cookie))
          .first<{ at: number }>()
      )?.at ?? 0;
    await age(cookie, "last_seen_at", 5 * 60_000);
    const aged = await lastSeen();
    expect((await getPage("/console", cookie, { "x-console-refresh": "1" })).status).toBe(200);
    expect(await lastSeen()).toBe(aged);
    expect((await getPage("/console", cookie)).status).toBe(200);
    expect(await lastSeen()).toBeGreaterThan(aged + 4 * 60_000);
  });

  it("the cookie is Secure when the console is reached over HTTPS, and not over plain HTTP", async () => {
    const https = await postForm(
      "/console/sign-in",
      { token: OPERATOR_TOKEN },
      { origin: "https://exec-inbox.test" },
    );
    expect(https.status).toBe(303);
    // The session cookie; the device cookie beside it is the throttle's (tested below).
    const attributes = (answer: Response) =>
      (answer.headers.getAll("set-cookie")[0] ?? "").split("; ").slice(1).sort();
    expect(attributes(https)).toEqual(["HttpOnly", "Path=/console", "SameSite=Strict", "Secure"]);
    const http = await postForm("/console/sign-in", { token: OPERATOR_TOKEN });
    expect(attributes(http)).toEqual(["HttpOnly", "Path=/console", "SameSite=Strict"]);
  });

  it("sign-in attempts past the limit get 429 with Retry-After, even with the right token; other clients are not held", async () => {
    const client = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
    for (let attempt = 0; attempt < SIGN_IN_FAILURES_PER_WINDOW; attempt++) {
      const wrong = await postForm("/console/sign-in", { token: `guess-${attempt}` }, { client });
      expect(wrong.status).toBe(401);
    }
    const held = await postForm("/console/sign-in", { token: OPERATOR_TOKEN }, { client });
    expect(held.status).toBe(429);
    expect(Number(held.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(held.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(cookieOf(held)).toBe("");
    expect(await held.text()).toContain("Too many sign-in attempts");
    // The window is counted per client address: another client signs in at once.
    expect((await postForm("/console/sign-in", { token: OPERATOR_TOKEN })).status).toBe(303);
  });
});

describe("sign-in throttling that a header cannot buy off", () => {
  /** The counts start clean (the tests above counted too) and are left clean for others. */
  const clean = async () => {
    await env.INDEX.prepare("DELETE FROM console_sign_in_attempts").run();
  };
  beforeEach(clean);
  afterEach(clean);

  /** Each guess from an address of its own, as a client that sets `CF-Connecting-IP` sends it. */
  const forgedGuesses = async (count: number, from: string) => {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      const client = `${from}.${i + 1}`;
      statuses.push(
        (await postForm("/console/sign-in", { token: `guess-${i}` }, { client })).status,
      );
    }
    return statuses;
  };

  it("30 wrong guesses, each with a forged CF-Connecting-IP, get 429 past the 20 a minute all clients share", async () => {
    const statuses = await forgedGuesses(30, "203.0.113");
    expect(statuses).toEqual([...Array(20).fill(401), ...Array(10).fill(429)]);
    // A new address with the right token is held as well: the guesses are used up for everyone
    // who has not signed in from this browser before.
    const held = await postForm(
      "/console/sign-in",
      { token: OPERATOR_TOKEN },
      { client: "198.18.0.1" },
    );
    expect(held.status).toBe(429);
    expect(Number(held.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("a browser that signed in before signs in while unrelated local clients hold every shared count", async () => {
    const first = await postForm("/console/sign-in", { token: OPERATOR_TOKEN }, { client: "" });
    expect(first.status).toBe(303);
    const device = first.headers
      .getAll("set-cookie")
      .find((line) => line.startsWith("exec_inbox_device="));
    expect(device).toBeDefined();
    // Local processes without the header (one shared count) and with forged ones (the global).
    for (let i = 0; i < SIGN_IN_FAILURES_PER_WINDOW; i++) {
      expect(
        (await postForm("/console/sign-in", { token: `local-${i}` }, { client: "" })).status,
      ).toBe(401);
    }
    await forgedGuesses(25, "198.51.100");
    const stranger = await postForm("/console/sign-in", { token: OPERATOR_TOKEN }, { client: "" });
    expect(stranger.status).toBe(429);
    const cookie = (device ?? "").split(";")[0] ?? "";
    const again = await postForm(
      "/console/sign-in",
      { token: OPERATOR_TOKEN },
      { client: "", cookie },
    );
    expect(again.status).toBe(303);
    expect((await signedInPage(cookieOf(again))).status).toBe(200);
    // A made-up device cookie is no device: it shares the held counts.
    const forged = await postForm(
      "/console/sign-in",
      { token: OPERATOR_TOKEN },
      { client: "", cookie: "exec_inbox_device=AAAAAAAAAAAAAAAAAAAAAA.AAAA" },
    );
    expect(forged.status).toBe(429);
  });
});
