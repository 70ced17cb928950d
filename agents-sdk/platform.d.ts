// What this Worker-side kit needs declared beyond @cloudflare/workers-types: the Node module the
// shared exec tools import (workerd provides it under `nodejs_compat`), and the Env namespace the
// Agents SDK's classes are generic over (a Worker's `wrangler types` fills it in).
declare module "node:timers/promises" {
  export function setTimeout<T = void>(delay: number, value?: T): Promise<T>;
}

declare namespace Cloudflare {
  // biome-ignore lint/suspicious/noEmptyInterface: filled in by each Worker's generated types.
  interface Env {}
}
