// Builds exec-inbox's Worker once before the end-to-end tests, with wrangler's own bundler (a
// dry-run deploy of wrangler.toml), so that their `wrangler dev` starts serve it as it is instead
// of each bundling the same sources again. vitest.config.ts hands the tests its path.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { TestProject } from "vitest/node";

const ROOT = resolve(import.meta.dirname, "../..");

/** The built Worker's entry module. */
export const WORKER_BUNDLE = resolve(ROOT, ".vitest-bundles/exec-inbox/index.js");

/**
 * The variable that names a built Worker to `startWranglerDev` (test/support/local-stack.ts), which
 * then runs `wrangler dev --no-bundle` on it. Unset, `wrangler dev` bundles src/, as `npm start` does.
 */
export const WORKER_BUNDLE_ENV = "EXEC_INBOX_WORKER_BUNDLE";

export default function bundleWorker(project: TestProject): void {
  build();
  // A rerun in watch mode may follow an edit of src/: it serves a new build.
  project.onTestsRerun(build);
}

function build(): void {
  const outdir = dirname(WORKER_BUNDLE);
  // wrangler dev serves every module it finds beside the entry: the folder holds this build alone.
  rmSync(outdir, { recursive: true, force: true });
  execFileSync(
    resolve(ROOT, "node_modules/.bin/wrangler"),
    ["deploy", "--dry-run", "--outdir", outdir],
    { cwd: ROOT, stdio: "pipe", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
}
