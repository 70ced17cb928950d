// Finds Debian's bubblewrap for the runner tests, installing it with apt-get where this machine
// lets us (root on Debian, as in CI). Fails loudly otherwise: sandbox tests never skip silently.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { probeBwrap } from "../../runner/src/bwrap";

const DEBIAN_BWRAP = "/usr/bin/bwrap";

export function ensureBwrap(log: (line: string) => void = console.log): string {
  if (!existsSync(DEBIAN_BWRAP)) {
    if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get")) {
      throw new Error(
        `bubblewrap is missing at ${DEBIAN_BWRAP} and this user cannot install it: run ` +
          "`sudo apt-get install -y --no-install-recommends bubblewrap`.",
      );
    }
    const started = Date.now();
    log("runner tests: installing Debian's bubblewrap with apt-get (once per machine)…");
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    // Another apt (the browser tests' Chromium, a machine's own) may hold dpkg's lock: wait for it.
    const apt = (...args: string[]) =>
      execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=120", ...args], {
        stdio: "inherit",
        env,
      });
    apt("update", "-qq");
    apt("install", "-y", "-qq", "--no-install-recommends", "bubblewrap");
    log(`runner tests: bubblewrap installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  // Installed is not enough: the kernel must allow the namespaces the runner asks for.
  const probe = probeBwrap(DEBIAN_BWRAP);
  if (!probe.works) throw new Error(`bubblewrap is installed but does not work here: ${probe.why}`);
  return DEBIAN_BWRAP;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(ensureBwrap());
}
