import { describe, expect, it, vi } from "vitest";
import { call, claim, complete, deliveries, suspendedOn, uniqueId, view } from "../support/api";

function expectUnknownOutcome(content: string): void {
  expect(content).toContain("Completion is not confirmed");
  expect(content).toContain("unknown outcome");
  expect(content).toContain("write_stdin");
  expect(content).not.toMatch(/have completed/i);
}

describe("a wait ceiling or a lost process", () => {
  it("a passed ceiling admits a wait_expired notice that never claims completion, and wakes once", async () => {
    const sid = uniqueId("ceiling");
    await suspendedOn(sid, ["h1", "h2"], { ceiling_ms: 1000 });
    // The real alarm fires at ceiling_at.
    await vi.waitFor(async () => expect(await deliveries(sid)).toHaveLength(1), {
      timeout: 10_000,
      interval: 100,
    });
    const after = await view(sid);
    expect(after.waiting_for_bash).toBeNull();
    expect(after.metadata).toEqual({});
    expect(after.resume).toMatchObject({
      reason: "background_exec_wait_expired",
      state: "delivered",
    });
    const claimed = await claim(sid);
    const [{ envelope, provider_message }] = claimed.body.claims;
    expect(envelope.body).toEqual({
      type: "runtime_instruction",
      instruction: "background_exec_wait_expired",
      data: { handles: ["h1", "h2"] },
    });
    expectUnknownOutcome(provider_message.content);
    expect(provider_message.metadata.hidden_from_ui).toBe(true);
  });

  it("a late completion after the ceiling is still stored and queued into the pending wake", async () => {
    const sid = uniqueId("late");
    const { tokens } = await suspendedOn(sid, ["h1"], { ceiling_ms: 1000 });
    await vi.waitFor(async () => expect(await deliveries(sid)).toHaveLength(1), {
      timeout: 10_000,
      interval: 100,
    });
    const late = await complete(sid, "h1", tokens.h1!, {
      status: "completed",
      exit_code: 0,
      output: "late",
    });
    expect(late.status).toBe(202);
    expect(late.body.disposition).toBe("queued");
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.output).toBe("late");
  });

  it("a lost process wakes with background_exec_outcome_unknown and a message that claims nothing", async () => {
    const sid = uniqueId("lost");
    const { tokens } = await suspendedOn(sid, ["h1"]);
    const lost = await complete(sid, "h1", tokens.h1!, {
      status: "lost",
      exit_code: null,
      output: "",
      ended_by: "runner_shutdown",
    });
    expect(lost.status).toBe(202);
    expect((await view(sid)).resume.reason).toBe("background_exec_outcome_unknown");
    const [{ envelope, provider_message }] = (await claim(sid)).body.claims;
    expect(envelope.body.instruction).toBe("background_exec_outcome_unknown");
    expect(envelope.body.data).toEqual({
      session_id: "h1",
      command: "run h1",
      ended_by: "runner_shutdown",
    });
    expectUnknownOutcome(provider_message.content);
    expect(provider_message.content.split("\n")[0]).toBe(
      '[runtime] Background command session_id="h1": outcome unknown (runner_shutdown).',
    );
  });
});
