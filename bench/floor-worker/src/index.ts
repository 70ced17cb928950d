// The floor of a durable wake on this runtime: a route that does nothing, a round trip to an object
// that does nothing, and one whose answer waits for one committed SQLite row (the output gate).
import { DurableObject } from "cloudflare:workers";

interface Env {
  FLOOR: DurableObjectNamespace<Floor>;
}

export class Floor extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS hits (n INTEGER PRIMARY KEY, at INTEGER)");
  }

  noop(): null {
    return null;
  }

  write(): null {
    this.ctx.storage.sql.exec("INSERT INTO hits (at) VALUES (?)", Date.now());
    return null;
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname, searchParams } = new URL(request.url);
    const stub = () => env.FLOOR.get(env.FLOOR.idFromName(searchParams.get("o") ?? "floor"));
    if (pathname === "/object") await stub().noop();
    else if (pathname === "/write") await stub().write();
    return Response.json({ ok: true });
  },
} satisfies ExportedHandler<Env>;
