import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defaultClientConditions, defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";
// With its extension: Vite loads this config natively, without TypeScript's resolution.
import { WORKER_BUNDLE, WORKER_BUNDLE_ENV } from "./test/support/bundle-worker.ts";
import { GLOBEX_AGENT_TOKEN, TEST_SECRETS } from "./test/support/secrets.ts";
import { SOURCE_CONDITION } from "./test/support/source-condition.ts";

// The packages (client, kits) resolve to their TypeScript sources here, not to a built dist/.
const SOURCES = {
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
};

// Local test values only; production settings come from `wrangler secret put`.
const TEST_BINDINGS = {
  ...TEST_SECRETS,
  AUDIT_MAX_EVENTS: "40",
  RESUME_URL_ALLOWLIST: "http://hooks.test,http://127.0.0.1:*",
  RESUME_WEBHOOK_URL: "",
  RESUME_MAX_ATTEMPTS: "4",
  // runner.test is the stand-in runner (FAKE_RUNNER); loopback lets a test name an unreachable one.
  RUNNER_URL_ALLOWLIST: "http://runner.test,http://127.0.0.1:*",
  // tasks/result of a working task answers after this wait (30 s deployed): a test sees the cap.
  MCP_RESULT_WAIT_MS: "1000",
  // WAKE_AGENT is bound below; NOT_BOUND is allowed but names no binding (a deployment's mistake).
  RESUME_BINDING_ALLOWLIST: "WAKE_AGENT,SHELL_AGENT_WAKE,NOT_BOUND",
  // globex has its own resume targets; every other tenant uses the globals above. `quota` has
  // quotas a test can reach; only `rate` meets the rate-limiting binding (wrangler.toml), so no
  // other test's requests count against a limit shared by the whole pool.
  TENANT_SETTINGS: JSON.stringify({
    default: { rate_limited: false },
    acme: { rate_limited: false },
    globex: {
      resume_url_allowlist: ["http://hooks.test"],
      resume_webhook_url: "http://hooks.test/hooks/globex-default",
      // globex may name no binding: RESUME_BINDING_ALLOWLIST does not apply to it.
      resume_binding_allowlist: [],
      runner_url_allowlist: ["http://globex-runner.test"],
      rate_limited: false,
    },
    quota: {
      rate_limited: false,
      quotas: {
        sessions: 3,
        running_jobs: 2,
        message_bytes: 4096,
        full_output_bytes: 8192,
        long_polls_per_session: 3,
        long_polls_per_tenant: 5,
      },
    },
  }),
};

export default defineConfig({
  test: {
    // Four files at a time on two cores: most tests wait on timers and other processes, not on
    // the CPU, and none asserts a time. With one busy loop beside it, three at a time took the
    // test command past 12 minutes.
    maxWorkers: 4,
    // The JSON report feeds the one-line summary that .ci/run prints.
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
    projects: [
      {
        // The pool's plugin adds the Workers' own conditions (workerd, worker…) to resolve's.
        ...SOURCES,
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: TEST_BINDINGS,
              // The binding of wrangler.toml with a limit a test reaches in one 10 s window (the
              // local limiter takes a few hundred requests a second); only tenant `rate` meets it.
              ratelimits: {
                TOKEN_RATE_LIMITER: { namespace_id: "7001", simple: { limit: 20, period: 10 } },
              },
              // Every outbound fetch of the Worker (the resume webhooks) reaches the recording host.
              outboundService: "agent-host",
              serviceBindings: {
                AGENT_HOST: "agent-host",
                // The Cloudflare-native wake's target: a WorkerEntrypoint with wake().
                WAKE_AGENT: { name: "wake-target", entrypoint: "WakeTarget" },
                // The Agents SDK kit's example agent: its wake entrypoint and its HTTP front.
                SHELL_AGENT_WAKE: { name: "sdk-agent", entrypoint: "ExecInboxWake" },
                SHELL_AGENT_HTTP: "sdk-agent",
                // The same agent serving tenant globex, whose sessions have a default webhook.
                SHELL_AGENT_GLOBEX_HTTP: "sdk-agent-globex",
                FAKE_RUNNER: "fake-runner",
              },
              workers: [
                {
                  name: "agent-host",
                  modules: true,
                  scriptPath: "./test/support/agent-host.mjs",
                  compatibilityDate: "2026-11-17",
                  // The Worker's calls to a session's runner (runner.test) pass on to the stand-in.
                  serviceBindings: { FAKE_RUNNER: "fake-runner" },
                },
                {
                  // Bundled by test/support/bundle-sdk-agent.ts before the pool starts.
                  name: "sdk-agent",
                  modules: true,
                  scriptPath: "./.vitest-bundles/sdk-agent/worker.js",
                  compatibilityDate: "2026-11-17",
                  compatibilityFlags: ["nodejs_compat"],
                  durableObjects: { SHELL_AGENT: { className: "ShellAgent", useSQLite: true } },
                  // exec-inbox is the pool's runner Worker (the vitest plugin names it so).
                  serviceBindings: { EXEC_INBOX: "vitest-plugin-runner-workers" },
                  // Its runner calls (plain fetch) reach the stand-in runner.
                  outboundService: "fake-runner",
                  bindings: {
                    EXEC_INBOX_TOKEN: TEST_SECRETS.AGENT_TOKENS.split(",")[0] ?? "",
                    RUNNER_URL: "http://runner.test",
                    RUNNER_TOKEN: "test-runner-token",
                  },
                },
                {
                  name: "sdk-agent-globex",
                  modules: true,
                  scriptPath: "./.vitest-bundles/sdk-agent/worker.js",
                  compatibilityDate: "2026-11-17",
                  compatibilityFlags: ["nodejs_compat"],
                  durableObjects: { SHELL_AGENT: { className: "ShellAgent", useSQLite: true } },
                  serviceBindings: { EXEC_INBOX: "vitest-plugin-runner-workers" },
                  outboundService: "fake-runner",
                  bindings: {
                    EXEC_INBOX_TOKEN: GLOBEX_AGENT_TOKEN,
                    RUNNER_URL: "http://runner.test",
                    RUNNER_TOKEN: "test-runner-token",
                  },
                },
                {
                  name: "fake-runner",
                  modules: true,
                  scriptPath: "./test/support/fake-runner.mjs",
                  compatibilityDate: "2026-11-17",
                },
                {
                  name: "wake-target",
                  modules: true,
                  scriptPath: "./test/support/wake-target.mjs",
                  compatibilityDate: "2026-11-17",
                },
              ],
            },
          }),
        ],
        test: {
          name: "workers",
          // One Miniflare per vitest worker for all its files, not one per file: a file's start
          // (workerd and every auxiliary Worker) cost ~16 s of a busy machine, 82 times. Files
          // share storage within a worker, so each names its own sessions and tenants.
          isolate: false,
          include: ["src/**/*.test.ts", "client/**/*.test.ts", "test/workers/**/*.test.ts"],
          // vitest's 5 s default is a bet on the machine's speed: beside a busy run, a test of a
          // few hundred requests passed it (the test, not the code, was slow).
          testTimeout: 30_000,
          // Bundles the Agents SDK kit's example agent, an extra worker of the pool.
          globalSetup: ["test/support/bundle-sdk-agent.ts"],
          // `npm run fuzz` raises both (FUZZ_RUNS, PROPERTY_RUNS); CI runs what it can afford.
          provide: {
            fuzzRuns: Number(process.env.FUZZ_RUNS ?? 400),
            fuzzSeed: Number(process.env.FUZZ_SEED ?? 42),
            propertyRuns: Number(process.env.PROPERTY_RUNS ?? 10_000),
          },
        },
      },
      {
        ...SOURCES,
        test: {
          name: "e2e",
          // The benchmarks' pure parts are tested beside them (bench/**), in Node like the e2e files.
          include: ["test/e2e/**/*.test.ts", "test/runner/**/*.test.ts", "bench/**/*.test.ts"],
          environment: "node",
          // Finds Debian's bubblewrap or installs it: the runner sandboxes every command by default.
          // Builds the Worker once: every `wrangler dev` of these tests serves that build (same
          // wrangler.toml, bindings and state) instead of bundling src/ again at each start.
          globalSetup: ["test/runner/global-setup.ts", "test/support/bundle-worker.ts"],
          env: { [WORKER_BUNDLE_ENV]: WORKER_BUNDLE },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        ...SOURCES,
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          environment: "node",
          // Finds Debian's Chromium or installs it; a missing browser fails the run, never skips.
          globalSetup: ["test/browser/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
