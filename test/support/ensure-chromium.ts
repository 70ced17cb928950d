// Finds Debian's Chromium for the browser tests, installing it with apt-get where this machine
// lets us (root on Debian, as in CI). Fails loudly otherwise: browser tests never skip silently.
import { existsSync } from "node:fs";
import { aptInstall } from "./apt-install";

const DEBIAN_CHROMIUM = "/usr/bin/chromium";

/** Flags Chromium needs on these machines: no sandbox as root, no calls to Google's hosts. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function ensureChromium(log: (line: string) => void = console.log): string {
  const chosen = process.env.CHROMIUM_PATH || DEBIAN_CHROMIUM;
  if (existsSync(chosen)) return chosen;
  if (process.env.CHROMIUM_PATH) {
    throw new Error(`CHROMIUM_PATH=${process.env.CHROMIUM_PATH} does not exist`);
  }
  aptInstall(
    "chromium",
    `Chromium is missing at ${DEBIAN_CHROMIUM} and this user cannot install it: run ` +
      "`sudo apt-get install -y --no-install-recommends chromium`, or set CHROMIUM_PATH.",
    (line) => log(`browser tests: ${line}`),
  );
  if (!existsSync(DEBIAN_CHROMIUM)) {
    throw new Error(`apt-get installed chromium, yet ${DEBIAN_CHROMIUM} is still missing`);
  }
  return DEBIAN_CHROMIUM;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(ensureChromium());
}
