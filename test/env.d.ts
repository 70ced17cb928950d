// The test Worker's bindings beyond the generated ones: the recording agent host and the wake
// target (vitest.config.ts).
declare global {
  namespace Cloudflare {
    interface Env {
      readonly AGENT_HOST: Fetcher;
      readonly WAKE_AGENT: Service<import("./support/wake-target.mjs").WakeTarget>;
      /** The Agents SDK kit's example agent Worker: its wake entrypoint, its HTTP front. */
      readonly SHELL_AGENT_WAKE: Fetcher & {
        wake(
          resume: import("@exec-inbox/client").ResumePayload,
        ): Promise<{ taken: boolean; reason?: string; runId?: string }>;
      };
      readonly SHELL_AGENT_HTTP: Fetcher;
      /** The same agent Worker, serving tenant globex. */
      readonly SHELL_AGENT_GLOBEX_HTTP: Fetcher;
      readonly FAKE_RUNNER: Fetcher;
    }
  }
}

export {};
