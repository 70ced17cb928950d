// A small agent Worker for the e2e tests under `wrangler dev`: exec-inbox wakes it through a
// service binding (its WorkerEntrypoint `Agent`), and it takes each wake as an agent host does —
// registers a run for the resume, claims, acks, finishes — through its own binding back to
// exec-inbox. `GET /_wakes` lists the wakes it got; `POST /_fail?n=N` makes the next N throw.
import { WorkerEntrypoint } from "cloudflare:workers";

const wakes = [];
let failing = 0;

export class Agent extends WorkerEntrypoint {
  async wake(resume) {
    wakes.push({ resume, received_at: Date.now(), taken: false });
    if (failing > 0) {
      failing -= 1;
      throw new Error("the agent is not ready");
    }
    const sessionPath = `/v1/sessions/${encodeURIComponent(resume.session_id)}`;
    const run = await this.call("POST", `${sessionPath}/runs`, { resume_id: resume.resume_id });
    // Another delivery of this resume already took it (a redelivery after a timeout): nothing to do.
    if (run.status === 409) return { taken: false };
    if (run.status !== 201) throw new Error(`registering the run answered ${run.status}`);
    const claimed = await this.call("POST", `${sessionPath}/inbox/claim`, {});
    const ids = claimed.body.claims.map((claim) => claim.envelope.id);
    await this.call("POST", `${sessionPath}/inbox/ack`, { ids });
    await this.call("POST", `${sessionPath}/runs/${run.body.run_id}/finish`, {});
    wakes.at(-1).taken = true;
    wakes.at(-1).envelopes = ids;
    return { taken: true };
  }

  async call(method, path, body) {
    // Loopback: exec-inbox serves its local development secrets only to a loopback host name.
    const response = await this.env.EXEC_INBOX.fetch(`http://127.0.0.1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.env.AGENT_TOKEN}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json().catch(() => null) };
  }
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return Response.json({ ok: true });
    if (url.pathname === "/_wakes") return Response.json({ wakes });
    if (url.pathname === "/_fail" && request.method === "POST") {
      failing = Number(url.searchParams.get("n") ?? "1");
      return new Response(null, { status: 204 });
    }
    return new Response("not found", { status: 404 });
  },
};
