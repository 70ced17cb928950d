// What the console's browser tests stand on: real `wrangler dev` (with local-stack's agent host),
// sessions made through the agent API, and headless Debian Chromium.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { CHROMIUM_ARGS, ensureChromium } from "../../scripts/ensure-chromium";
import { api, devVar } from "../../scripts/lib/local-stack";
import type { Callback } from "../../src/client";

export const OPERATOR_TOKEN = devVar("OPERATOR_TOKENS");

/** A session whose agent suspended on one background job: the shape operators meet most. */
export async function suspendedSession(
  base: string,
  sid: string,
  resumeUrl: string,
  handle = "build",
): Promise<Callback> {
  const created = await api(base, "POST", "/v1/sessions", { id: sid, resume_url: resumeUrl });
  if (created.status !== 201) throw new Error(`create ${sid}: ${JSON.stringify(created.body)}`);
  const job = await api(base, "POST", `/v1/sessions/${sid}/exec-jobs`, {
    handle,
    command: `npm run ${handle}`,
  });
  const run = await api(base, "POST", `/v1/sessions/${sid}/runs`, {});
  const suspended = await api(base, "POST", `/v1/sessions/${sid}/runs/${run.body.run_id}/suspend`, {
    waiting_for: [handle],
  });
  if (suspended.status !== 200)
    throw new Error(`suspend ${sid}: ${JSON.stringify(suspended.body)}`);
  return job.body.callback as Callback;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: ensureChromium(), headless: true, args: CHROMIUM_ARGS });
}

export async function signIn(page: Page, base: string, token = OPERATOR_TOKEN): Promise<void> {
  await page.goto(`${base}/console`);
  await page.getByLabel("Operator token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Screenshots always get taken; CONSOLE_SCREENSHOTS=docs writes them over the README's. */
export async function screenshot(page: Page, name: string, scratchDir: string): Promise<void> {
  const dir = process.env.CONSOLE_SCREENSHOTS === "docs" ? "docs" : scratchDir;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/** The status badge in a session page's heading, or a list row's. */
export const headingStatus = (page: Page) => page.locator("#live h1 .badge").textContent();
export const rowStatus = (page: Page, sid: string) =>
  page.locator(`tr[data-session="default/${sid}"] td:nth-child(2) .badge`).textContent();
