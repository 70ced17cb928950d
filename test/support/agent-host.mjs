// The one stand-in agent host of the tests and scripts: it records every resume webhook it
// receives under its hook key (`/hooks/<key>`) and answers with the statuses scripted for that
// key (default 200), optionally slowly. Serving it is left to the caller: workerd loads this file
// as a Worker (vitest.config.ts), Node serves `createAgentHost().fetch` (local-stack.ts).

/** @param {{ statusFor?: (key: string, n: number) => number }} [options] */
export function createAgentHost(options = {}) {
  const deliveries = new Map();
  const scripts = new Map();
  const deliveriesTo = (key) => {
    let list = deliveries.get(key);
    if (list === undefined) {
      list = [];
      deliveries.set(key, list);
    }
    return list;
  };
  return {
    /** The webhooks a hook key received, oldest first: a live list. */
    deliveries: deliveriesTo,
    /** The next answers for a hook key, in order: a status, or {status, delayMs}; 0 = network failure. */
    script(key, statuses) {
      scripts.set(key, [...statuses]);
    },
    async fetch(request) {
      const url = new URL(request.url);
      const [, area, key] = url.pathname.split("/");
      if (area === "hooks") {
        const list = deliveriesTo(key);
        list.push({
          headers: Object.fromEntries(request.headers),
          body: await request.text(),
          received_at: Date.now(),
        });
        const script = scripts.get(key) ?? [];
        const next =
          script.length > 0 ? script.shift() : (options.statusFor?.(key, list.length) ?? 200);
        const status = typeof next === "number" ? next : next.status;
        if (typeof next === "object" && next.delayMs > 0)
          await new Promise((resolve) => setTimeout(resolve, next.delayMs));
        if (status === 0) throw new Error("scripted network failure");
        const headers =
          status >= 300 && status < 400 ? { location: "http://hooks.test/hooks/elsewhere" } : {};
        return new Response(status >= 300 && status < 400 ? null : "ok", { status, headers });
      }
      // For a host in another process (the workers pool's): scripts and recordings over HTTP.
      if (area === "_control") {
        if (request.method === "PUT") {
          scripts.set(key, (await request.json()).statuses);
          return new Response(null, { status: 204 });
        }
        return Response.json({ deliveries: deliveries.get(key) ?? [] });
      }
      return new Response("not found", { status: 404 });
    },
  };
}

const host = createAgentHost();
// In the workers pool every outbound fetch of the Worker under test lands here: the calls to a
// session's runner at runner.test go on to the stand-in runner (fake-runner.mjs).
export default {
  fetch: (request, env) =>
    new URL(request.url).hostname === "runner.test" && env?.FAKE_RUNNER !== undefined
      ? env.FAKE_RUNNER.fetch(request)
      : host.fetch(request),
};
