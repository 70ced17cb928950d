// A stand-in agent Worker woken through a service binding (vitest.config.ts binds it as
// WAKE_AGENT): its `wake(resume)` records each call under the resume's session id and settles as
// scripted for that session (default: resolves). Plain JavaScript, so workerd loads it as it is.
import { WorkerEntrypoint } from "cloudflare:workers";

const calls = new Map();
const scripts = new Map();

const callsOf = (sessionId) => {
  let list = calls.get(sessionId);
  if (list === undefined) {
    list = [];
    calls.set(sessionId, list);
  }
  return list;
};

/** A class instance: Workers RPC cannot serialize it. */
class Opaque {
  x = 1;
}

export class WakeTarget extends WorkerEntrypoint {
  /** The method exec-inbox calls: "ok" resolves, "throw" rejects, "hang" settles after a minute. */
  async wake(resume) {
    callsOf(resume.session_id).push({ resume, received_at: Date.now() });
    const script = scripts.get(resume.session_id) ?? [];
    const next = script.length > 0 ? script.shift() : "ok";
    if (next === "throw") throw new Error("scripted agent failure");
    // A promise nothing can settle is cancelled by workerd at once ("will never generate a
    // response"): a timer that outlasts the caller's deadline is what a stuck agent looks like.
    if (next === "hang") await new Promise((resolve) => setTimeout(resolve, 60_000));
    // A value Workers RPC cannot serialize (a class instance): the wake ran, the call fails.
    if (next === "unserializable") return new Opaque();
    return { ok: true };
  }

  /** The next outcomes of wake() for a session, in order. */
  script(sessionId, outcomes) {
    scripts.set(sessionId, [...outcomes]);
  }

  /** Every wake() call for a session, oldest first. */
  calls(sessionId) {
    return calls.get(sessionId) ?? [];
  }
}

export default {
  fetch: () => new Response("a wake target: call wake() over the binding", { status: 404 }),
};
