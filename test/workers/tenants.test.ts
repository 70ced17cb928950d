// Tenants: the same session ids in two tenants are two sessions, and nothing of one
// tenant — a read, a write, a callback token — reaches the other's.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app";
import { call, complete, deliveries, hookUrl, result, uniqueId } from "../support/api";
import {
  ACME_AGENT_TOKEN,
  AGENT_TOKEN,
  GLOBEX_AGENT_TOKEN,
  SECOND_AGENT_TOKEN,
} from "../support/secrets";

const ACME = ACME_AGENT_TOKEN;
const GLOBEX = GLOBEX_AGENT_TOKEN;

/** A session of the tenant behind `token`, with its own hook key, suspended on job `h`. */
async function suspendedIn(token: string, sid: string, hookKey: string) {
  const created = await call("POST", "/v1/sessions", {
    token,
    body: { id: sid, resume_url: hookUrl(hookKey) },
  });
  expect(created.status).toBe(201);
  const reserved = await call("POST", `/v1/sessions/${sid}/exec-jobs`, {
    token,
    body: { handle: "h", command: "sleep 1" },
  });
  expect(reserved.status).toBe(201);
  const run = await call("POST", `/v1/sessions/${sid}/runs`, { token, body: {} });
  const suspended = await call("POST", `/v1/sessions/${sid}/runs/${run.body.run_id}/suspend`, {
    token,
    body: { waiting_for: ["h"] },
  });
  expect(suspended.status).toBe(200);
  return {
    lifetime: created.body.lifetime as string,
    token: reserved.body.callback.token as string,
    url: reserved.body.callback.url as string,
  };
}

/** Every agent route, as a request another tenant could make on session `sid`. */
const agentRoutes = (sid: string): Array<[string, string, unknown?]> => [
  ["GET", `/v1/sessions/${sid}`],
  ["GET", `/v1/sessions/${sid}/stats`],
  ["POST", `/v1/sessions/${sid}/messages`, { role: "user", content: "hi" }],
  ["GET", `/v1/sessions/${sid}/messages`],
  ["POST", `/v1/sessions/${sid}/runs`, {}],
  ["POST", `/v1/sessions/${sid}/runs/run_x/suspend`, { waiting_for: ["h"] }],
  ["POST", `/v1/sessions/${sid}/runs/run_x/finish`, {}],
  ["GET", `/v1/sessions/${sid}/runs/run_x/notifications`],
  ["POST", `/v1/sessions/${sid}/exec-jobs`, { handle: "h", command: "sleep 1" }],
  ["GET", `/v1/sessions/${sid}/exec-jobs`],
  ["GET", `/v1/sessions/${sid}/exec-jobs/h`],
  ["GET", `/v1/sessions/${sid}/inbox`],
  ["POST", `/v1/sessions/${sid}/inbox/claim`, {}],
  ["POST", `/v1/sessions/${sid}/inbox/ack`, { ids: ["x"] }],
  ["DELETE", `/v1/sessions/${sid}`],
];

describe("tenants", () => {
  it("the same session id in two tenants is two independent sessions", async () => {
    const sid = uniqueId("twin");
    const acme = await suspendedIn(ACME, sid, `acme-${sid}`);
    const globex = await suspendedIn(GLOBEX, sid, `globex-${sid}`);
    expect(acme.lifetime).not.toBe(globex.lifetime);
    // The callback URL is the same path: only the token tells the tenants apart.
    expect(new URL(acme.url).pathname).toBe(new URL(globex.url).pathname);

    const acmeView = await call("GET", `/v1/sessions/${sid}`, { token: ACME });
    expect(acmeView.body).toMatchObject({ tenant: "acme", lifetime: acme.lifetime });
    const globexView = await call("GET", `/v1/sessions/${sid}`, { token: GLOBEX });
    expect(globexView.body).toMatchObject({ tenant: "globex", lifetime: globex.lifetime });
    // The default tenant (bare tokens) has no session of that id.
    expect((await call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
  });

  it("every agent route answers 404, never 403, for a session of another tenant, and changes nothing", async () => {
    const sid = uniqueId("private");
    await suspendedIn(ACME, sid, `acme-${sid}`);
    const before = await call("GET", `/v1/sessions/${sid}`, { token: ACME });
    for (const token of [GLOBEX, AGENT_TOKEN]) {
      for (const [method, path, body] of agentRoutes(sid)) {
        const answer = await call(method, path, { token, body });
        expect([method, path, answer.status, answer.body.code]).toEqual([
          method,
          path,
          404,
          "not_found",
        ]);
      }
    }
    const after = await call("GET", `/v1/sessions/${sid}`, { token: ACME });
    expect(after.body).toEqual(before.body);
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs/h`, { token: ACME })).status).toBe(
      200,
    );
  });

  it("a callback token completes only its own tenant's job on the identical path", async () => {
    const sid = uniqueId("callback");
    const acme = await suspendedIn(ACME, sid, `acme-${sid}`);
    await suspendedIn(GLOBEX, sid, `globex-${sid}`);

    const accepted = await complete(sid, "h", acme.token, result(0, "acme's output"));
    expect([accepted.status, accepted.body.disposition]).toEqual([202, "resume_scheduled"]);

    const globexJob = await call("GET", `/v1/sessions/${sid}/exec-jobs/h`, { token: GLOBEX });
    expect(globexJob.body).toMatchObject({
      status: "running",
      exit_code: null,
      completed_at: null,
    });
    const globexView = await call("GET", `/v1/sessions/${sid}`, { token: GLOBEX });
    expect(globexView.body.status).toBe("suspended");
    const acmeJob = await call("GET", `/v1/sessions/${sid}/exec-jobs/h`, { token: ACME });
    expect(acmeJob.body).toMatchObject({ status: "completed", output: "acme's output" });
  });

  it("a callback token whose tenant was rewritten is refused as forged", async () => {
    const sid = uniqueId("rewrite");
    const acme = await suspendedIn(ACME, sid, `acme-${sid}`);
    await suspendedIn(GLOBEX, sid, `globex-${sid}`);
    const [prefix, payload, signature] = acme.token.split(".") as [string, string, string];
    const fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    expect(fields.at(-1)).toBe("acme");
    const moved = Buffer.from(JSON.stringify([...fields.slice(0, -1), "globex"])).toString(
      "base64url",
    );
    const forged = await complete(sid, "h", `${prefix}.${moved}.${signature}`, result(0, "x"));
    expect([forged.status, forged.body.code]).toEqual([401, "unauthorized"]);
    const globexJob = await call("GET", `/v1/sessions/${sid}/exec-jobs/h`, { token: GLOBEX });
    expect(globexJob.body.status).toBe("running");
  });

  it("an agent token of one tenant cannot complete a job: completions need the callback token", async () => {
    const sid = uniqueId("agent-as-runner");
    await suspendedIn(ACME, sid, `acme-${sid}`);
    const refused = await complete(sid, "h", ACME, result(0, "x"));
    expect([refused.status, refused.body.code]).toEqual([401, "unauthorized"]);
  });

  it("the resume webhook names the tenant", async () => {
    const sid = uniqueId("webhook");
    const acme = await suspendedIn(ACME, sid, `acme-${sid}`);
    await suspendedIn(GLOBEX, sid, `globex-${sid}`);
    await complete(sid, "h", acme.token, result(0, "done"));
    await expect.poll(async () => (await deliveries(`acme-${sid}`)).length).toBe(1);
    const [delivery] = await deliveries(`acme-${sid}`);
    expect(JSON.parse(delivery?.body ?? "{}")).toMatchObject({
      type: "session.resume",
      tenant: "acme",
      session_id: sid,
      lifetime: acme.lifetime,
    });
    expect(await deliveries(`globex-${sid}`)).toEqual([]);
  });

  it("deleting a session in one tenant leaves the other's twin alone", async () => {
    const sid = uniqueId("delete");
    await suspendedIn(ACME, sid, `acme-${sid}`);
    const globex = await suspendedIn(GLOBEX, sid, `globex-${sid}`);
    expect((await call("DELETE", `/v1/sessions/${sid}`, { token: ACME })).status).toBe(204);
    const kept = await call("GET", `/v1/sessions/${sid}`, { token: GLOBEX });
    expect(kept.body).toMatchObject({ status: "suspended", lifetime: globex.lifetime });
    const accepted = await complete(sid, "h", globex.token, result(0, "still here"));
    expect(accepted.status).toBe(202);
  });

  it("sessions created with a bare token are the default tenant's, as before tenants existed", async () => {
    const sid = uniqueId("bare");
    const created = await call("POST", "/v1/sessions", { body: { id: sid } });
    expect(created.body.tenant).toBe("default");
    // Both bare tokens name the same tenant.
    const other = await call("GET", `/v1/sessions/${sid}`, { token: SECOND_AGENT_TOKEN });
    expect(other.body.lifetime).toBe(created.body.lifetime);
  });

  it("a malformed AGENT_TOKENS refuses every request with a problem naming the entry, not the token", async () => {
    const app = createApp();
    for (const path of ["/healthz", "/v1/sessions/s1"]) {
      const answer = await app.fetch(
        new Request(`http://exec-inbox.test${path}`, {
          headers: { authorization: "Bearer Acme-token" },
        }),
        { ...env, AGENT_TOKENS: "good-token,Acme:Acme-token" },
      );
      expect(answer.status).toBe(500);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await answer.json()) as { code: string; detail: string };
      expect(problem.code).toBe("internal");
      expect(problem.detail).toContain("AGENT_TOKENS entry 2");
      expect(problem.detail).not.toContain("Acme-token");
    }
  });

  it("a tenant with its own allowlist cannot choose an origin only the global allowlist has", async () => {
    const sid = uniqueId("own-allowlist");
    const loopback = "http://127.0.0.1:9/resume";
    const globex = await call("POST", "/v1/sessions", {
      token: GLOBEX,
      body: { id: sid, resume_url: loopback },
    });
    expect([globex.status, globex.body.code]).toEqual([422, "invalid_request"]);
    expect((await call("GET", `/v1/sessions/${sid}`, { token: GLOBEX })).status).toBe(404);
    const acme = await call("POST", "/v1/sessions", {
      token: ACME,
      body: { id: sid, resume_url: loopback },
    });
    expect(acme.status).toBe(201);
  });

  it("a tenant's own webhook URL receives the resumes of its sessions created without resume_url", async () => {
    const sid = uniqueId("own-webhook");
    await call("POST", "/v1/sessions", { token: GLOBEX, body: { id: sid } });
    const reserved = await call("POST", `/v1/sessions/${sid}/exec-jobs`, {
      token: GLOBEX,
      body: { handle: "h", command: "true" },
    });
    const before = (await deliveries("globex-default")).length;
    const accepted = await complete(sid, "h", reserved.body.callback.token, result(0, ""));
    expect([accepted.status, accepted.body.disposition]).toEqual([202, "resume_scheduled"]);
    await expect.poll(async () => (await deliveries("globex-default")).length).toBe(before + 1);
    const latest = (await deliveries("globex-default")).at(-1);
    expect(JSON.parse(latest?.body ?? "{}")).toMatchObject({ tenant: "globex", session_id: sid });
    // The same kind of session in a tenant without a webhook URL waits as no_target.
    const other = uniqueId("no-webhook");
    await call("POST", "/v1/sessions", { token: ACME, body: { id: other } });
    const job = await call("POST", `/v1/sessions/${other}/exec-jobs`, {
      token: ACME,
      body: { handle: "h", command: "true" },
    });
    await complete(other, "h", job.body.callback.token, result(0, ""));
    await expect
      .poll(
        async () =>
          (await call("GET", `/v1/sessions/${other}`, { token: ACME })).body.resume?.state,
      )
      .toBe("no_target");
  });
});
