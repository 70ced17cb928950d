// Bundles the Agents SDK kit's example Worker before the workers pool starts: extra miniflare
// workers are loaded as they are, not through Vite, so the agent must be one built module.
// wrangler's own bundler (a dry-run deploy) builds it exactly as `wrangler dev` would.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { WRANGLER_SOURCE_ENV } from "./source-condition";

const ROOT = resolve(import.meta.dirname, "../..");

export default function bundleAgentWorker(): void {
  execFileSync(
    resolve(ROOT, "node_modules/.bin/wrangler"),
    [
      "deploy",
      "--dry-run",
      "--outdir",
      resolve(ROOT, ".vitest-bundles/sdk-agent"),
      "-c",
      resolve(ROOT, "agents-sdk/example/wrangler.toml"),
    ],
    {
      cwd: ROOT,
      stdio: "pipe",
      env: { ...process.env, ...WRANGLER_SOURCE_ENV, WRANGLER_SEND_METRICS: "false" },
    },
  );
}
