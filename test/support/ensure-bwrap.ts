// Finds Debian's bubblewrap for the runner tests, installing it with apt-get where this machine
// lets us (root on Debian, as in CI). Fails loudly otherwise: sandbox tests never skip silently.
import { existsSync } from "node:fs";
import { probeBwrap } from "../../runner/src/bwrap";
import { aptInstall } from "./apt-install";

const DEBIAN_BWRAP = "/usr/bin/bwrap";

export function ensureBwrap(log: (line: string) => void = console.log): string {
  if (!existsSync(DEBIAN_BWRAP)) {
    aptInstall(
      "bubblewrap",
      `bubblewrap is missing at ${DEBIAN_BWRAP} and this user cannot install it: run ` +
        "`sudo apt-get install -y --no-install-recommends bubblewrap`.",
      (line) => log(`runner tests: ${line}`),
    );
  }
  // Installed is not enough: the kernel must allow the namespaces the runner asks for.
  const probe = probeBwrap(DEBIAN_BWRAP);
  if (!probe.works) throw new Error(`bubblewrap is installed but does not work here: ${probe.why}`);
  return DEBIAN_BWRAP;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(ensureBwrap());
}
