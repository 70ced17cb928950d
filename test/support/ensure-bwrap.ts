// Finds Debian's bubblewrap for the runner tests, installing it with apt-get where this machine
// lets us (root on Debian, as in CI). Fails loudly otherwise: sandbox tests never skip silently.
import { existsSync } from "node:fs";
import { probeBwrap } from "../../runner/src/bwrap";
import { DEFAULT_SANDBOX_USER } from "../../runner/src/sandbox-settings";
import { buildSeccompFilter } from "../../runner/src/seccomp";
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
  // The sandbox's seccomp filter is built by libseccomp's Python binding.
  if (!buildSeccompFilter().ok) {
    aptInstall(
      "python3-seccomp",
      "python3-seccomp is missing and this user cannot install it: run " +
        "`sudo apt-get install -y --no-install-recommends python3-seccomp`.",
      (line) => log(`runner tests: ${line}`),
    );
  }
  const filter = buildSeccompFilter();
  if (!filter.ok) throw new Error(`the sandbox's seccomp filter does not build: ${filter.why}`);
  // Installed is not enough: the kernel must allow the namespaces the runner asks for, as the
  // user the runner would run commands as.
  const user = process.getuid?.() === 0 ? DEFAULT_SANDBOX_USER : null;
  const probe = probeBwrap(user, filter.program);
  if (!probe.works) throw new Error(`bubblewrap is installed but does not work here: ${probe.why}`);
  return DEBIAN_BWRAP;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(ensureBwrap());
}
