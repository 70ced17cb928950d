// What the console's browser tests stand on: real `wrangler dev` (with local-stack's agent host),
// sessions made through the agent API, and headless Debian Chromium.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { CHROMIUM_ARGS, ensureChromium } from "../support/ensure-chromium";
import { devVar } from "../support/local-stack";

export const OPERATOR_TOKEN = devVar("OPERATOR_TOKENS");

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: ensureChromium(), headless: true, args: CHROMIUM_ARGS });
}

export async function signIn(page: Page, base: string, token = OPERATOR_TOKEN): Promise<void> {
  await page.goto(`${base}/console`);
  await page.getByLabel("Operator token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Screenshots always get taken; CONSOLE_SCREENSHOTS=docs writes them over the README's. */
export async function screenshot(
  page: Page,
  name: string,
  scratchDir: string,
  { fullPage = true }: { fullPage?: boolean } = {},
): Promise<void> {
  const dir = process.env.CONSOLE_SCREENSHOTS === "docs" ? "docs" : scratchDir;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage });
}

/** The status badge in a session page's heading, or a list row's. */
export const headingStatus = (page: Page) => page.locator("#live h1 .badge").textContent();
export const rowStatus = (page: Page, sid: string) =>
  page.locator(`tr[data-session="default/${sid}"] td:nth-child(2) .badge`).textContent();
