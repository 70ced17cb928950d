// The test Worker's bindings beyond the generated ones: the recording agent host and the wake
// target (vitest.config.ts).
declare global {
  namespace Cloudflare {
    interface Env {
      readonly AGENT_HOST: Fetcher;
      readonly WAKE_AGENT: Service<import("./support/wake-target.mjs").WakeTarget>;
    }
  }
}

export {};
