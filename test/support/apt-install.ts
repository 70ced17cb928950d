// Installs one Debian package with apt-get, for the test setups that need a system tool (Chromium,
// bubblewrap). Deciding whether it is needed, and checking it afterwards, is the caller's.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/** Throws `refusal` where this user cannot install (not root, or no apt-get), as CI can. */
export function aptInstall(pkg: string, refusal: string, log: (line: string) => void): void {
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get")) throw new Error(refusal);
  const started = Date.now();
  log(`installing Debian's ${pkg} with apt-get (once per machine)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  // Another apt (a parallel setup, the machine's own) may hold dpkg's lock: wait for it.
  const apt = (...args: string[]) =>
    execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=120", ...args], { stdio: "inherit", env });
  apt("update", "-qq");
  apt("install", "-y", "-qq", "--no-install-recommends", pkg);
  log(`${pkg} installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
