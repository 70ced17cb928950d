import { setTimeout as sleep } from "node:timers/promises";
import { ExecInboxClient, type Fetcher, postCompletion } from "@exec-inbox/client";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { useServer } from "../support/e2e-arrange";
import { useWranglerDev } from "../support/local-dev";
import {
  AGENT_TOKEN,
  devVar,
  type Received,
  startAgentHost,
  suspendedSession,
  waitFor,
} from "../support/local-stack";

describe("exec-inbox under the real wrangler dev, with a real HTTP agent host", () => {
  const local = useWranglerDev("e2e", { RESUME_URL_ALLOWLIST: "http://127.0.0.1:*" });
  const host = useServer(() => startAgentHost());

  /** The status of the last answer, which the contract fixes for each step (201, 202, 200). */
  let lastStatus = 0;
  const recording: Fetcher = async (request) => {
    const response = await fetch(request);
    lastStatus = response.status;
    return response;
  };
  const inbox = () =>
    new ExecInboxClient({ baseUrl: local.dev.base, token: AGENT_TOKEN, fetch: recording });

  it("create, reserve, suspend, complete, receive the signed resume, claim, pull — and survive a restart", async () => {
    const sid = `e2e-${Date.now()}`;
    await inbox().createSession({ id: sid, resume_url: host().url });
    expect(lastStatus).toBe(201);

    const reserved = await inbox().reserveJob(sid, {
      handle: "bg-1",
      command: "sleep 2; printf inbox-result; exit 7",
    });
    expect(lastStatus).toBe(201);
    const { url: callbackUrl, token } = reserved.callback;
    expect(callbackUrl).toBe(`${local.dev.base}/v1/sessions/${sid}/exec-jobs/bg-1/completion`);

    const run = await inbox().registerRun(sid);
    const suspended = await inbox().suspend(sid, run.run_id, { waiting_for: ["bg-1"] });
    expect(suspended.status).toBe("suspended");
    expect(suspended.metadata).toMatchObject({ runtime: { background_exec_id: "bg-1" } });

    const completion = {
      status: "completed",
      exit_code: 7,
      output: "inbox-result",
      ended_by: "process",
    } as const;
    const accepted = await postCompletion(reserved.callback, completion, { fetch: recording });
    expect(lastStatus).toBe(202);
    expect(accepted).toEqual({
      outcome: "accepted",
      generation: 1,
      disposition: "resume_scheduled",
    });

    const delivery = await waitFor<Received>(() => host().received[0]);
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

    await inbox().registerRun(sid, { resume_id: payload.resume_id });
    expect(lastStatus).toBe(201);
    const claimed = await inbox().claim(sid);
    expect(claimed.claims).toHaveLength(1);
    const [claim] = claimed.claims as any[];
    const message = claim.provider_message;
    expect(message.metadata.hidden_from_ui).toBe(true);
    expect(message.content).toContain('write_stdin with session_id="bg-1"');
    expect(JSON.parse(claim.envelope.body.data.result)).toMatchObject({
      exit_code: 7,
      output: "inbox-result",
    });
    const pulled = await inbox().getJob(sid, "bg-1");
    expect(pulled).toMatchObject({
      status: "completed",
      exit_code: 7,
      output: "inbox-result",
    });
    const acked = await inbox().ack(sid, { ids: [claim.envelope.id] });
    expect(acked.acked).toHaveLength(1);

    // Restart the process on the same state directory: everything is still there, nothing is resent.
    const before = await inbox().getSession(sid);
    await local.restart();
    expect(await inbox().getSession(sid)).toEqual(before);
    expect(await inbox().getJob(sid, "bg-1")).toEqual(pulled);
    const duplicate = await postCompletion(reserved.callback, completion, { fetch: recording });
    expect(lastStatus).toBe(200);
    expect(duplicate.outcome).toBe("duplicate");
    await sleep(1000);
    expect(host().received).toHaveLength(1);

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
    const callback = await suspendedSession(local.dev.base, sid, `${host().url}?sid=${sid}`, "h");
    // The wait was armed by the process that is stopped; the new process must honour it.
    await local.restart();
    await postCompletion(
      callback,
      { status: "failed", exit_code: 1, output: "" },
      { fetch: recording },
    );
    expect(lastStatus).toBe(202);
    const mine = () => host().received.filter((entry) => JSON.parse(entry.body).session_id === sid);
    await waitFor(() => (mine().length === 1 ? true : undefined));
    await sleep(1000);
    expect(mine()).toHaveLength(1);
  });
});
