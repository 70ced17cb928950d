// A stand-in agent host for the workers-pool tests: it records every resume webhook it receives
// and answers with the statuses a test scripted for that hook key (default 200), optionally slowly.
const deliveries = new Map();
const scripts = new Map();

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const [, area, key] = url.pathname.split("/");
    if (area === "hooks") {
      const list = deliveries.get(key) ?? [];
      list.push({
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
        received_at: Date.now(),
      });
      deliveries.set(key, list);
      const script = scripts.get(key) ?? [];
      const next = script.length > 0 ? script.shift() : 200;
      // An entry is a status, or {status, delayMs} for a slow host.
      const status = typeof next === "number" ? next : next.status;
      if (typeof next === "object" && next.delayMs > 0)
        await new Promise((resolve) => setTimeout(resolve, next.delayMs));
      if (status === 0) throw new Error("scripted network failure");
      const headers =
        status >= 300 && status < 400 ? { location: "http://hooks.test/hooks/elsewhere" } : {};
      return new Response(status >= 300 && status < 400 ? null : "ok", { status, headers });
    }
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
