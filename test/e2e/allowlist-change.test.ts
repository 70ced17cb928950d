// The resume allowlist is checked at every delivery attempt: an operator who withdraws an origin
// (a redeploy with a new RESUME_URL_ALLOWLIST) stops the deliveries already scheduled to it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { postCompletion } from "@exec-inbox/client";
import { afterAll, describe, expect, it } from "vitest";
import {
  agentClient,
  startAgentHost,
  startWranglerDev,
  viewWhen,
  type WranglerDev,
  waitFor,
} from "../support/local-stack";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** One state directory and port, redeployed with new settings; stopped when the file ends. */
function redeployable() {
  const stateDir = mkdtempSync(join(tmpdir(), "exec-inbox-redeploy-"));
  let dev: WranglerDev | undefined;
  let port: number | undefined;
  cleanups.push(async () => {
    await dev?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });
  return {
    async deploy(vars: Record<string, string>, healthzStatus = 200): Promise<WranglerDev> {
      await dev?.stop();
      dev = await startWranglerDev(stateDir, port ?? "any", vars, healthzStatus);
      port = dev.port;
      return dev;
    },
  };
}

async function agentHost(statusFor: (n: number) => number) {
  const host = await startAgentHost(statusFor);
  cleanups.push(() => host.close());
  return host;
}

/** A job `h` of a new session, completed with its callback. */
async function completedJob(dev: WranglerDev, sid: string, session: { resume_url?: string } = {}) {
  const inbox = agentClient(dev.base);
  await inbox.createSession({ id: sid, ...session });
  const reserved = await inbox.reserveJob(sid, { handle: "h", command: "sleep 5" });
  const completion = await postCompletion(reserved.callback, {
    status: "completed",
    exit_code: 0,
    output: "ok",
  });
  expect(completion.outcome).toBe("accepted");
}

describe("an allowlist change between two delivery attempts", () => {
  it("an origin removed from RESUME_URL_ALLOWLIST gets no further attempt, and the resume fails naming the allowlist", async () => {
    // The host is down: every resume gets a 503.
    const host = await agentHost(() => 503);
    const stack = redeployable();
    let dev = await stack.deploy({ RESUME_URL_ALLOWLIST: "http://127.0.0.1:*" });
    const sid = `allowlist-${Date.now()}`;
    await completedJob(dev, sid, { resume_url: host.url });
    const first = await viewWhen(
      dev.base,
      sid,
      (view) => view.resume?.last_error !== null && view.resume?.attempts === 1,
    );
    expect(first.resume).toMatchObject({ state: "scheduled", attempts: 1 });
    expect(first.resume.last_error).toContain("503");
    expect(host.received.length).toBe(1);

    // The operator withdraws the origin and redeploys; the retry is due while the Worker is down.
    dev = await stack.deploy({ RESUME_URL_ALLOWLIST: "http://localhost:*" });
    const stopped = await viewWhen(dev.base, sid, (view) => view.resume?.state === "failed");
    expect(stopped.status).toBe("idle");
    expect(stopped.resume).toMatchObject({ state: "failed", attempts: 1 });
    expect(stopped.resume.last_error).toContain("RESUME_URL_ALLOWLIST");
    expect(stopped.resume.last_error).toContain("http://127.0.0.1");
    expect(host.received.length).toBe(1);
    // The result itself is kept: the inbox still holds it for the next wake or a claim.
    expect(stopped.inbox.pending).toBe(1);
    // And the same URL can no longer be chosen by a new session.
    const refused = agentClient(dev.base).createSession({ id: `${sid}-new`, resume_url: host.url });
    await expect(refused).rejects.toMatchObject({
      problem: { status: 422, code: "invalid_request" },
    });
  });
});

describe("settings the Worker refuses to serve", () => {
  it("a malformed TENANT_SETTINGS pauses due deliveries until it is fixed, then the same resume goes out", async () => {
    const host = await agentHost((n) => (n === 1 ? 503 : 204));
    const stack = redeployable();
    const good = { RESUME_URL_ALLOWLIST: "http://127.0.0.1:*", RESUME_WEBHOOK_URL: host.url };
    let dev = await stack.deploy(good);
    const sid = `paused-${Date.now()}`;
    await completedJob(dev, sid);
    await waitFor(() => (host.received.length === 1 ? true : undefined), 30_000);

    // The retry falls due while the Worker runs on settings it refuses to serve.
    dev = await stack.deploy({ ...good, TENANT_SETTINGS: "{broken" }, 500);
    const refused = await fetch(`${dev.base}/healthz`);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(((await refused.json()) as { detail: string }).detail).toContain("TENANT_SETTINGS");
    await sleep(3000);
    expect(host.received).toHaveLength(1);

    dev = await stack.deploy(good);
    await waitFor(() => (host.received.length === 2 ? true : undefined), 30_000);
    const [first, second] = host.received.map((hit) => JSON.parse(hit.body));
    expect(second).toMatchObject({ tenant: "default", session_id: sid });
    expect(second.resume_id).toBe(first.resume_id);
    const view = await agentClient(dev.base).getSession(sid);
    expect(view.resume).toMatchObject({ state: "delivered", attempts: 2 });
  });
});
