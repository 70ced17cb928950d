import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import * as api from "../support/api";

describe("a terminal result for a suspended session", () => {
  it("is stored, clears the wait, wakes exactly once and stays pullable", async () => {
    const sid = api.uniqueId("wake-once");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    const before = await api.view(sid);
    expect(before.status).toBe("suspended");
    expect(before.waiting_for_bash).toMatchObject({ handles: ["h1"], wake: "all" });
    expect(before.suspension).toMatchObject({ reason: "waiting_for_bash", resumable: true });
    expect(before.metadata.runtime).toEqual({
      suspend_reason: "waiting_for_bash",
      background_exec_id: "h1",
    });

    const accepted = await api.complete(sid, "h1", tokens.h1!, api.result(7, "inbox-result"));
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({
      outcome: "accepted",
      generation: 1,
      disposition: "resume_scheduled",
    });

    const after = await api.view(sid);
    expect(after.status).toBe("resuming");
    expect(after.waiting_for_bash).toBeNull();
    expect(after.suspension).toBeNull();
    expect(after.metadata).toEqual({});
    expect(after.inbox).toEqual({ pending: 1, claimed: 0, generation: 1 });
    expect(after.resume).toMatchObject({ reason: "background_exec_completed" });

    // The real alarm fires at once; running it again by hand must not deliver a second time.
    const sent = await vi.waitFor(async () => {
      const list = await api.deliveries(sid);
      expect(list).toHaveLength(1);
      return list;
    });
    await api.fireAlarm(sid);
    const delivery = sent[0]!;
    const payload = new Webhook(api.SIGNING_SECRET).verify(
      delivery.body,
      delivery.headers,
    ) as Record<string, unknown>;
    expect(payload).toEqual({
      type: "session.resume",
      tenant: "default",
      session_id: sid,
      lifetime: after.lifetime,
      resume_id: after.resume.resume_id,
      reason: "background_exec_completed",
      inbox: { pending: 1 },
    });
    expect(delivery.headers["webhook-id"]).toBe(after.resume.resume_id);

    const claimed = await api.claim(sid);
    expect(claimed.status).toBe(200);
    expect(claimed.body.claims).toHaveLength(1);
    const { envelope, provider_message: message } = claimed.body.claims[0];
    expect(envelope.body.instruction).toBe("background_exec_completed");
    expect(envelope.correlation_id).toBe("h1");
    expect(JSON.parse(envelope.body.data.result)).toEqual({
      session_id: "h1",
      status: "completed",
      exit_code: 7,
      output: "inbox-result",
      output_truncated: false,
    });
    expect(message.role).toBe("user");
    expect(message.metadata.hidden_from_ui).toBe(true);
    expect(message.content).toContain('write_stdin with session_id="h1"');
    expect(message.content).toContain("inbox-result");
    expect(message.content).not.toContain("BashOutput");

    const duplicate = await api.complete(sid, "h1", tokens.h1!, api.result(7, "inbox-result"));
    expect(duplicate.status).toBe(200);
    expect(duplicate.body).toEqual({ outcome: "duplicate", generation: 1 });
    await api.fireAlarm(sid);
    expect(await api.deliveries(sid)).toHaveLength(1);
    const settled = await api.view(sid);
    expect(settled.inbox).toEqual({ pending: 0, claimed: 1, generation: 1 });
    expect(settled.resume).toMatchObject({
      resume_id: after.resume.resume_id,
      state: "delivered",
      attempts: 1,
    });

    const pulled = await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`);
    expect(pulled.status).toBe(200);
    expect(pulled.body).toMatchObject({
      handle: "h1",
      status: "completed",
      exit_code: 7,
      output: "inbox-result",
    });
  });
});

/**
 * The rows a wake needs: the session row at the completion (its first attempt folded in) and at
 * the delivery's outcome (2), the job's result and its completion-time index entry (2), the inbox
 * item and its two index entries (3), and the two audit events, the completion and the delivery
 * (2). Rows are billed per write; a wake that wrote a row more per message, job or event held
 * would pass this budget in a few wakes.
 */
const WAKE_ROW_BUDGET = 9;

describe("what a waking completion costs", () => {
  it(`writes at most ${WAKE_ROW_BUDGET} SQLite rows and needs no alarm: the first delivery attempt is in the completion's own commit`, async () => {
    const sid = api.uniqueId("wake-rows");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    const stats = async () => (await api.call("GET", `/v1/sessions/${sid}/stats`)).body;
    const before = await stats();
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"))).status).toBe(202);
    await vi.waitFor(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const after = await stats();
    expect(after.rows_written - before.rows_written).toBeLessThanOrEqual(WAKE_ROW_BUDGET);
    expect(after.alarms - before.alarms).toBe(0);
    expect(await api.deliveries(sid)).toHaveLength(1);
  });
});
