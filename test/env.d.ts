declare namespace Cloudflare {
  interface Env extends import("../src/env").Env {
    readonly AGENT_HOST: Fetcher;
  }
}
