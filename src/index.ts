// Worker entry: the Hono app as the default export, and the session Durable Object class.
import type { Env } from "./env";
import { createApp } from "./http/app";

export { SessionObject } from "./session-object/session-object";

const app = createApp();

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
