// Worker entry: the Hono app as the default export, and the session Durable Object class.
import type { Env } from "./env";
import { createApp } from "./http/app";
import { serviceUpSince } from "./session-object/service-clock";

export { SessionObject } from "./session-object/session-object";

const app = createApp();

export default {
  // The first request marks when this isolate started taking requests (liveness.ts).
  fetch: (request, env, ctx) => {
    serviceUpSince();
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
