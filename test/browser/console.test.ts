// The operator console in headless Chromium against the real `wrangler dev`: sign in, watch
// sessions move by themselves, and mend them with the confirmed actions; and the pages beside it
// (the front door, /docs), offline.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postCompletion } from "@exec-inbox/client";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCALAR_SCRIPT_PATH, SCALAR_VERSION } from "../../src/http/reference-version";
import {
  agentClient,
  freePort,
  startAgentHost,
  startWranglerDev,
  suspendedSession,
  type WranglerDev,
} from "../support/local-stack";
import {
  headingStatus,
  launchChromium,
  OPERATOR_TOKEN,
  rowStatus,
  screenshot,
  signIn,
} from "./support";

const SEEN_WITHIN = { timeout: 30_000, interval: 250 };

/** The element's text once it is there; the auto-refresh may swap it between two reads. */
const text = async (locator: Locator) =>
  (await locator.textContent({ timeout: SEEN_WITHIN.timeout })) ?? "";

describe("the operator console in a real browser", () => {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-console-"));
  const shotsDir = mkdtempSync(join(tmpdir(), "exec-inbox-console-shots-"));
  let host: Awaited<ReturnType<typeof startAgentHost>>;
  let dev: WranglerDev;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every answer ≥ 400 a page load got, and every request that left the origin. */
  const failedLoads: string[] = [];
  const foreignLoads: string[] = [];

  beforeAll(async () => {
    host = await startAgentHost();
    dev = await startWranglerDev(stateDir, "any", {
      RESUME_URL_ALLOWLIST: "http://127.0.0.1:*",
      RESUME_MAX_ATTEMPTS: "2",
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on("response", (response) => {
      if (response.status() >= 400) failedLoads.push(`${response.status()} ${response.url()}`);
    });
    page.on("request", (request) => {
      if (!request.url().startsWith(dev.base) && !/^(data|about):/.test(request.url())) {
        foreignLoads.push(request.url());
      }
    });
  });

  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
    await host?.close();
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(shotsDir, { recursive: true, force: true });
  });

  it("refuses a wrong token with a message, and signs in to a server-side session whose opaque id is kept in a session cookie", async () => {
    await signIn(page, dev.base, "not-an-operator-token");
    await expect
      .poll(() => text(page.getByRole("alert")), SEEN_WITHIN)
      .toBe("That is not an operator token.");
    await signIn(page, dev.base, OPERATOR_TOKEN);
    await page
      .getByRole("heading", { name: "Sessions that need attention" })
      .waitFor({ timeout: SEEN_WITHIN.timeout });
    expect(page.url()).toBe(`${dev.base}/console`);
    const cookie = (await context.cookies()).find(({ name }) => name === "exec_inbox_operator");
    expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie?.value).not.toBe(OPERATOR_TOKEN);
    expect(cookie).toMatchObject({
      path: "/console",
      httpOnly: true,
      sameSite: "Strict",
      expires: -1,
    });
  });

  it("shows a suspended session by itself, and watches it move on when its job completes", async () => {
    const sid = `watched-${Date.now()}`;
    await page.goto(`${dev.base}/console`);
    const callback = await suspendedSession(dev.base, sid, host.urlFor("healthy"));
    await expect.poll(() => rowStatus(page, sid), SEEN_WITHIN).toBe("suspended");
    await expect
      .poll(() => text(page.locator(`tr[data-session="default/${sid}"]`)), SEEN_WITHIN)
      .toContain("build");
    await expect
      .poll(() => text(page.locator('[data-count="suspended"] b')), SEEN_WITHIN)
      .not.toBe("0");

    const since = page.locator(`tr[data-session="default/${sid}"] td:nth-child(3)`);
    await expect.poll(() => text(since), SEEN_WITHIN).toMatch(/^(just now|\d+ s ago)$/);
    await page.getByRole("link", { name: sid }).click();
    await expect.poll(() => headingStatus(page), SEEN_WITHIN).toBe("suspended");
    await expect
      .poll(() => text(page.locator('tr[data-job="build"]')), SEEN_WITHIN)
      .toContain("running");

    await postCompletion(callback, { status: "completed", exit_code: 0, output: "built in 3 s" });
    await expect.poll(() => headingStatus(page), SEEN_WITHIN).toBe("resuming");
    await expect
      .poll(() => text(page.locator('tr[data-job="build"]')), SEEN_WITHIN)
      .toContain("completed");
    await expect
      .poll(() => text(page.locator('tr[data-event="completion"]')), SEEN_WITHIN)
      .toContain("outcome=accepted");
    await expect
      .poll(() => text(page.locator('tr[data-event="delivery"]').first()), SEEN_WITHIN)
      .toContain("status=200");

    await page.getByRole("link", { name: /bytes$/ }).click();
    await expect.poll(() => text(page.locator("pre")), SEEN_WITHIN).toBe("built in 3 s");
  });

  it("shows a failed resume in red, and pressing Redeliver delivers it again", async () => {
    const sid = `failing-${Date.now()}`;
    host.answer("broken", 500);
    const callback = await suspendedSession(dev.base, sid, host.urlFor("broken"));
    await postCompletion(callback, { status: "failed", exit_code: 1, output: "tests failed" });
    await suspendedSession(dev.base, `waiting-${Date.now()}`, host.urlFor("healthy"), "deploy");

    await page.goto(`${dev.base}/console?status=failed`);
    await expect.poll(() => rowStatus(page, sid), SEEN_WITHIN).toBe("failed");
    const row = page.locator(`tr[data-session="default/${sid}"]`);
    await expect.poll(() => text(row), SEEN_WITHIN).toContain("2 attempts");
    await expect.poll(() => text(row), SEEN_WITHIN).toContain("500");
    await page.goto(`${dev.base}/console`);
    await page
      .locator(`tr[data-session="default/${sid}"]`)
      .waitFor({ timeout: SEEN_WITHIN.timeout });
    await screenshot(page, "console-list", shotsDir);

    host.answer("broken", 200);
    await row.getByRole("link", { name: sid }).click();
    await page.getByRole("link", { name: "Redeliver resume…" }).click();
    await page
      .getByRole("heading", { name: "Redeliver resume?" })
      .waitFor({ timeout: SEEN_WITHIN.timeout });
    await page.getByRole("button", { name: "Redeliver resume" }).click();
    await expect
      .poll(() => text(page.getByRole("status")), SEEN_WITHIN)
      .toMatch(/Redelivery scheduled/);
    await expect.poll(() => host.deliveries("broken").length, SEEN_WITHIN).toBe(3);
    await expect
      .poll(() => text(page.locator('tr[data-event="operator"]')), SEEN_WITHIN)
      .toContain("action=redeliver");
    await expect
      .poll(() => text(page.locator('tr[data-event="delivery"]').first()), SEEN_WITHIN)
      .toContain("status=200");
    const deliveries = await page.locator('tr[data-event="delivery"]').allTextContents();
    expect(deliveries.map((row) => /status=(\d+)/.exec(row)?.[1])).toEqual(["200", "500", "500"]);
    await screenshot(page, "console-session", shotsDir);
  });

  it("marks a running job lost after a confirmation, and the agent is woken for it", async () => {
    const sid = `lost-${Date.now()}`;
    const callback = await suspendedSession(dev.base, sid, host.urlFor("healthy"), "migrate");
    await page.goto(`${dev.base}/console/sessions/default/${sid}`);
    await page.locator('tr[data-job="migrate"]').getByRole("link", { name: "Mark lost…" }).click();
    await page
      .getByRole("heading", { name: "Mark job lost?" })
      .waitFor({ timeout: SEEN_WITHIN.timeout });
    await page.getByRole("button", { name: "Mark job lost" }).click();

    await expect
      .poll(() => text(page.getByRole("status")), SEEN_WITHIN)
      .toBe("The job was marked lost.");
    const status = page.locator('tr[data-job="migrate"] td:nth-child(3)');
    await expect.poll(() => text(status), SEEN_WITHIN).toBe("lostby operator");
    expect(await page.locator('tr[data-job="migrate"]').getByRole("link").count()).toBe(1);
    await expect.poll(() => headingStatus(page), SEEN_WITHIN).toBe("resuming");
    await expect(
      postCompletion(callback, { status: "completed", exit_code: 0, output: "too late" }),
    ).rejects.toMatchObject({ problem: { code: "result_conflict" } });
  });

  it("shows the API's refusal as a readable message when an action does not apply", async () => {
    const sid = `nothing-failed-${Date.now()}`;
    await suspendedSession(dev.base, sid, host.urlFor("healthy"));
    await page.goto(`${dev.base}/console/sessions/default/${sid}/confirm/redeliver`);
    await page.getByRole("button", { name: "Redeliver resume" }).click();
    await expect
      .poll(() => text(page.getByRole("alert")), SEEN_WITHIN)
      .toContain("It did not work.");
    await expect
      .poll(() => text(page.getByRole("alert")), SEEN_WITHIN)
      .toContain("(409 invalid_transition)");
  });

  it("deletes a session after a confirmation and says so on the list", async () => {
    const sid = `deleted-${Date.now()}`;
    await suspendedSession(dev.base, sid, host.urlFor("healthy"));
    await page.goto(`${dev.base}/console/sessions/default/${sid}`);
    await page.getByRole("link", { name: "Delete session…" }).click();
    await page.getByRole("button", { name: "Delete session" }).click();
    await expect
      .poll(() => text(page.getByRole("status")), SEEN_WITHIN)
      .toBe("The session was deleted.");
    await expect(agentClient(dev.base).getSession(sid)).rejects.toMatchObject({
      problem: { status: 404, code: "not_found" },
    });
    await expect
      .poll(() => page.locator(`tr[data-session="default/${sid}"]`).count(), SEEN_WITHIN)
      .toBe(0);
  });

  it("refuses a console POST from another origin, and signs out so that the old cookie opens nothing", async () => {
    const signedIn = (await context.cookies()).find(({ name }) => name === "exec_inbox_operator");
    const oldCookie = `exec_inbox_operator=${signedIn?.value}`;
    const forged = await fetch(`${dev.base}/console/sessions/default/any/actions/delete`, {
      method: "POST",
      headers: { origin: "https://evil.example", cookie: oldCookie },
    });
    expect(forged.status).toBe(403);
    expect((await fetch(`${dev.base}/console`, { headers: { cookie: oldCookie } })).status).toBe(
      200,
    );
    await page.goto(`${dev.base}/console`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Operator token").waitFor({ timeout: SEEN_WITHIN.timeout });
    // Only the device cookie stays: it opens nothing (docs/operators.md, sign-in throttling).
    expect((await context.cookies()).map(({ name }) => name)).toEqual(["exec_inbox_device"]);
    // The session ended on the server: a copy of the cookie kept elsewhere is refused too.
    expect((await fetch(`${dev.base}/console`, { headers: { cookie: oldCookie } })).status).toBe(
      401,
    );
  });

  it("the front door shows the version, the health and the links, and loads nothing that fails", async () => {
    failedLoads.length = 0;
    await page.goto(`${dev.base}/`);
    await page
      .getByRole("heading", { name: "exec-inbox" })
      .waitFor({ timeout: SEEN_WITHIN.timeout });
    const service = page.getByRole("region", { name: "Service" });
    expect(await text(service)).toMatch(
      /Version\s*0\.\d+\.\d+\s*Worker\s*ok\s*Durable Objects\s*ok/,
    );
    for (const name of ["Operator console", "API reference", "OpenAPI document", "Health"]) {
      expect(await page.getByRole("link", { name }).count()).toBe(1);
    }
    await page.waitForLoadState("networkidle");
    expect(failedLoads).toEqual([]);
    await screenshot(page, "front-door", shotsDir);
  });

  it("/docs renders the reference offline from the installed package: an operation's summary is on the page", async () => {
    const installed = JSON.parse(
      readFileSync("node_modules/@scalar/api-reference/package.json", "utf8"),
    ) as { version: string };
    expect(installed.version).toBe(SCALAR_VERSION);
    failedLoads.length = 0;
    foreignLoads.length = 0;
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(`${dev.base}/docs`);
    await page
      .getByText("Create a session", { exact: true })
      .filter({ visible: true })
      .first()
      .waitFor({ timeout: SEEN_WITHIN.timeout });
    expect(await page.locator("#reference-fallback").count()).toBe(0);
    expect(await page.getByText("Ask AI").count()).toBe(0);
    expect(await page.getByText("Developer Tools").count()).toBe(0);
    await page.waitForLoadState("networkidle");
    // The whole reference is many screens long: the first one shows what it is.
    await screenshot(page, "docs-page", shotsDir, { fullPage: false });
    // The sidebar's group of the service routes opens on a click, and shows their operations.
    await page.getByText("Service", { exact: true }).first().click();
    await page
      .getByRole("heading", { name: "The front door: version, health and where to go next" })
      .waitFor({ timeout: SEEN_WITHIN.timeout });
    expect(foreignLoads).toEqual([]);
    expect(failedLoads).toEqual([]);
    expect(violations).toEqual([]);
  });

  it("/docs says where the document is when its script does not load", async () => {
    await page.route(`**${SCALAR_SCRIPT_PATH}`, (route) => route.abort());
    try {
      await page.goto(`${dev.base}/docs`);
      const fallback = page.locator("#reference-fallback");
      await expect
        .poll(() => text(fallback), SEEN_WITHIN)
        .toBe("The reference viewer did not load. The OpenAPI document is at /openapi.json.");
      expect(await fallback.getByRole("link").getAttribute("href")).toBe("/openapi.json");
    } finally {
      await page.unroute(`**${SCALAR_SCRIPT_PATH}`);
    }
  });

  it("an unknown session's page shows only its not-found notice and does not refresh", async () => {
    await signIn(page, dev.base, OPERATOR_TOKEN);
    const sid = `never-made-${Date.now()}`;
    await page.goto(`${dev.base}/console/sessions/default/${sid}`);
    await expect
      .poll(() => text(page.getByRole("alert")), SEEN_WITHIN)
      .toContain("Not found: no such session");
    expect(await page.getByRole("heading", { name: "Jobs" }).count()).toBe(0);
    expect(await page.getByRole("heading", { name: "Audit trail" }).count()).toBe(0);
    const refreshes: string[] = [];
    const onRequest = (request: { url(): string }) => refreshes.push(request.url());
    page.on("request", onRequest);
    await page.waitForTimeout(4_000);
    page.off("request", onRequest);
    expect(refreshes).toEqual([]);
    await screenshot(page, "console-not-found", shotsDir);
  });

  it("a staged item is said to wait for the wake condition, and a refused connection to the agent host is called unreachable", async () => {
    const staged = `staged-${Date.now()}`;
    const inbox = agentClient(dev.base);
    await inbox.createSession({ id: staged, resume_url: host.urlFor("healthy") });
    const first = await inbox.reserveJob(staged, { handle: "lint", command: "npm run lint" });
    await inbox.reserveJob(staged, { handle: "test", command: "npm test" });
    const run = await inbox.registerRun(staged);
    await inbox.suspend(staged, run.run_id, { waiting_for: ["lint", "test"] });
    await postCompletion(first.callback, { status: "completed", exit_code: 0, output: "clean" });
    await page.goto(`${dev.base}/console/sessions/default/${staged}`);
    const resume = page.getByRole("region", { name: "Resume" });
    await expect
      .poll(() => text(resume), SEEN_WITHIN)
      .toContain("No resume yet: 1 pending inbox item waits until every awaited job has finished");
    expect(await text(page.getByRole("region", { name: "Inbox" }))).toContain("1 pending");

    const refused = `refused-${Date.now()}`;
    const closedPort = await freePort();
    const callback = await suspendedSession(
      dev.base,
      refused,
      `http://127.0.0.1:${closedPort}/hooks/none`,
    );
    await postCompletion(callback, { status: "completed", exit_code: 0, output: "done" });
    await page.goto(`${dev.base}/console/sessions/default/${refused}`);
    await expect
      .poll(() => text(page.getByRole("region", { name: "Resume" })), SEEN_WITHIN)
      .toContain("agent host could not be reached");
    await screenshot(page, "console-unreachable", shotsDir);
  });

  // Last: it uses up the sign-in guesses every unknown client shares for a minute.
  it("30 wrong sign-ins with forged CF-Connecting-IP get 429 past 20, and this browser, which signed in before, still signs in", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const answer = await fetch(`${dev.base}/console/sign-in`, {
        method: "POST",
        redirect: "manual",
        headers: { origin: dev.base, "cf-connecting-ip": `203.0.113.${i + 1}` },
        body: new URLSearchParams({ token: `guess-${i}` }),
      });
      statuses.push(answer.status);
    }
    // The first test's wrong token may still count in the shared minute: 19 or 20 go through.
    const through = statuses.indexOf(429);
    expect(through).toBeGreaterThanOrEqual(19);
    expect(statuses).toEqual([...Array(through).fill(401), ...Array(30 - through).fill(429)]);
    await page.goto(`${dev.base}/console`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(page, dev.base, OPERATOR_TOKEN);
    await page
      .getByRole("heading", { name: "Sessions that need attention" })
      .waitFor({ timeout: SEEN_WITHIN.timeout });
  });
});
