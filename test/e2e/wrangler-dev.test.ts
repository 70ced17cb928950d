import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  api,
  devVar,
  type Received,
  startAgentHost,
  suspendedSession,
  waitFor,
} from "../../scripts/lib/local-stack";
import { useWranglerDev } from "../support/local-dev";

describe("exec-inbox under the real wrangler dev, with a real HTTP agent host", () => {
  let host: Awaited<ReturnType<typeof startAgentHost>>;
  const local = useWranglerDev("e2e", { RESUME_URL_ALLOWLIST: "http://127.0.0.1:*" });

  beforeAll(async () => {
    host = await startAgentHost();
  });

  afterAll(async () => {
    await host?.close();
  });

  it("create, reserve, suspend, complete, receive the signed resume, claim, pull — and survive a restart", async () => {
    const sid = `e2e-${Date.now()}`;
    const created = await api(local.dev.base, "POST", "/v1/sessions", {
      id: sid,
      resume_url: host.url,
    });
    expect(created.status).toBe(201);

    const reserved = await api(local.dev.base, "POST", `/v1/sessions/${sid}/exec-jobs`, {
      handle: "bg-1",
      command: "sleep 2; printf inbox-result; exit 7",
    });
    expect(reserved.status).toBe(201);
    const { url: callbackUrl, token } = reserved.body.callback;
    expect(callbackUrl).toBe(`${local.dev.base}/v1/sessions/${sid}/exec-jobs/bg-1/completion`);

    const run = await api(local.dev.base, "POST", `/v1/sessions/${sid}/runs`, {});
    const suspended = await api(
      local.dev.base,
      "POST",
      `/v1/sessions/${sid}/runs/${run.body.run_id}/suspend`,
      {
        waiting_for: ["bg-1"],
      },
    );
    expect(suspended.body.status).toBe("suspended");
    expect(suspended.body.metadata.runtime.background_exec_id).toBe("bg-1");

    const completion = {
      status: "completed",
      exit_code: 7,
      output: "inbox-result",
      ended_by: "process",
    };
    const accepted = await api(
      local.dev.base,
      "POST",
      new URL(callbackUrl).pathname,
      completion,
      token,
    );
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({
      outcome: "accepted",
      generation: 1,
      disposition: "resume_scheduled",
    });

    const delivery = await waitFor<Received>(() => host.received[0]);
    const headers = Object.fromEntries(
      Object.entries(delivery.headers).map(([key, value]) => [key, String(value)]),
    );
    const payload = new Webhook(devVar("RESUME_SIGNING_SECRET")).verify(
      delivery.body,
      headers,
    ) as any;
    expect(payload).toMatchObject({
      type: "session.resume",
      session_id: sid,
      reason: "background_exec_completed",
    });
    expect(headers["webhook-id"]).toBe(payload.resume_id);

    const resumed = await api(local.dev.base, "POST", `/v1/sessions/${sid}/runs`, {
      resume_id: payload.resume_id,
    });
    expect(resumed.status).toBe(201);
    const claimed = await api(local.dev.base, "POST", `/v1/sessions/${sid}/inbox/claim`, {});
    expect(claimed.body.claims).toHaveLength(1);
    const message = claimed.body.claims[0].provider_message;
    expect(message.metadata.hidden_from_ui).toBe(true);
    expect(message.content).toContain('write_stdin with session_id="bg-1"');
    expect(JSON.parse(claimed.body.claims[0].envelope.body.data.result)).toMatchObject({
      exit_code: 7,
      output: "inbox-result",
    });
    const pulled = await api(local.dev.base, "GET", `/v1/sessions/${sid}/exec-jobs/bg-1`);
    expect(pulled.body).toMatchObject({
      status: "completed",
      exit_code: 7,
      output: "inbox-result",
    });
    const acked = await api(local.dev.base, "POST", `/v1/sessions/${sid}/inbox/ack`, {
      ids: [claimed.body.claims[0].envelope.id],
    });
    expect(acked.body.acked).toHaveLength(1);

    // Restart the process on the same state directory: everything is still there, nothing is resent.
    const before = await api(local.dev.base, "GET", `/v1/sessions/${sid}`);
    await local.restart();
    const after = await api(local.dev.base, "GET", `/v1/sessions/${sid}`);
    expect(after.body).toEqual(before.body);
    expect((await api(local.dev.base, "GET", `/v1/sessions/${sid}/exec-jobs/bg-1`)).body).toEqual(
      pulled.body,
    );
    const duplicate = await api(
      local.dev.base,
      "POST",
      new URL(callbackUrl).pathname,
      completion,
      token,
    );
    expect(duplicate.status).toBe(200);
    expect(duplicate.body.outcome).toBe("duplicate");
    await sleep(1000);
    expect(host.received).toHaveLength(1);

    // No token or secret ever reaches a log line.
    const logs = local.dev.logs();
    expect(logs).toContain("/completion");
    for (const secret of [
      token,
      devVar("AGENT_TOKENS"),
      devVar("CALLBACK_SECRETS"),
      devVar("RESUME_SIGNING_SECRET"),
    ]) {
      expect(logs).not.toContain(secret);
    }
  });

  it("a wait armed before a restart still wakes exactly once after it", async () => {
    const sid = `e2e-restart-${Date.now()}`;
    const callback = await suspendedSession(local.dev.base, sid, `${host.url}?sid=${sid}`, "h");
    // The wait was armed by the process that is stopped; the new process must honour it.
    await local.restart();
    const path = `/v1/sessions/${sid}/exec-jobs/h/completion`;
    const done = await api(
      local.dev.base,
      "POST",
      path,
      { status: "failed", exit_code: 1, output: "" },
      callback.token,
    );
    expect(done.status).toBe(202);
    const mine = () => host.received.filter((entry) => JSON.parse(entry.body).session_id === sid);
    await waitFor(() => (mine().length === 1 ? true : undefined));
    await sleep(1000);
    expect(mine()).toHaveLength(1);
  });
});
