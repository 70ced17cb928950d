import type { Env as WorkerEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      readonly AGENT_HOST: Fetcher;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
      durableNamespaces: "SessionObject";
    }
  }
}
