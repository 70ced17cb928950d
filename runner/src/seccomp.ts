// Builds the sandbox's seccomp filter once, with libseccomp's Python binding (seccomp-filter.py
// holds the list of refused calls). Handing it to bwrap is the launcher's.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("./seccomp-filter.py", import.meta.url));
/** Debian's Python, where `apt-get install python3-seccomp` puts the binding. */
const PYTHON = "/usr/bin/python3";

export type SeccompBuild =
  | { readonly ok: true; readonly program: Uint8Array }
  | { readonly ok: false; readonly why: string };

export function buildSeccompFilter(python = PYTHON): SeccompBuild {
  const built = spawnSync(python, [SCRIPT], { timeout: 10_000 });
  if (built.error !== undefined) {
    return { ok: false, why: `${python} cannot run (${built.error.message})` };
  }
  if (built.status !== 0 || built.stdout.length === 0) {
    const said = built.stderr.toString().trim().split("\n").at(-1) ?? "";
    return {
      ok: false,
      why: said.includes("No module named 'seccomp'")
        ? "python3-seccomp is not installed (apt-get install python3-seccomp)"
        : `the filter did not build: ${said || `exit ${built.status}`}`,
    };
  }
  return { ok: true, program: new Uint8Array(built.stdout) };
}
