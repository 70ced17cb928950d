// The test Worker's bindings beyond the generated ones: the recording agent host (vitest.config.ts).
declare global {
  namespace Cloudflare {
    interface Env {
      readonly AGENT_HOST: Fetcher;
    }
  }
}

export {};
