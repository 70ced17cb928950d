// The agent side of `npm run bench -- binding`: one Worker woken both ways on the same runtime — a
// WorkerEntrypoint `Receiver` whose wake() exec-inbox calls through a service binding, and a fetch
// handler taking the signed webhook (verified, as a host must). Each records when a wake landed.
import { WorkerEntrypoint } from "cloudflare:workers";

const received = new Map();
/** Long-polls waiting for a session's wake: answered the moment it lands (no polling load). */
const waiting = new Map();

function land(sessionId) {
  received.set(sessionId, Date.now());
  for (const resolve of waiting.get(sessionId) ?? []) resolve();
  waiting.delete(sessionId);
}

async function verified(request, secret) {
  const id = request.headers.get("webhook-id") ?? "";
  const timestamp = request.headers.get("webhook-timestamp") ?? "";
  const body = await request.text();
  const raw = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, [
    "verify",
  ]);
  const given = (request.headers.get("webhook-signature") ?? "").split(" ")[0]?.slice(3) ?? "";
  const signature = Uint8Array.from(atob(given), (c) => c.charCodeAt(0));
  const ok = await crypto.subtle.verify(
    "HMAC",
    key,
    signature,
    new TextEncoder().encode(`${id}.${timestamp}.${body}`),
  );
  return ok ? JSON.parse(body) : null;
}

export class Receiver extends WorkerEntrypoint {
  wake(resume) {
    land(resume.session_id);
    return { ok: true };
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/_received") {
      const sessionId = url.searchParams.get("sid");
      if (sessionId !== null && !received.has(sessionId)) {
        await new Promise((resolve) => {
          waiting.set(sessionId, [...(waiting.get(sessionId) ?? []), resolve]);
          setTimeout(resolve, 10_000);
        });
      }
      return Response.json(Object.fromEntries(received));
    }
    const resume = await verified(request, env.RESUME_SIGNING_SECRET);
    if (resume === null) return new Response("bad signature", { status: 401 });
    land(resume.session_id);
    return new Response(null, { status: 204 });
  },
};
