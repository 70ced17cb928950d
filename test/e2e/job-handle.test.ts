import { setTimeout as sleep } from "node:timers/promises";
import { ExecInboxError, startJob } from "@exec-inbox/client";
import { describe, expect, it } from "vitest";
import { startLivenessInbox } from "../runner/liveness-inbox";
import { waitFor } from "../support/local-stack";

/** A reservation's callback at the stand-in inbox, with a timeout below the service's 5 s floor. */
function callbackOf(inbox: Awaited<ReturnType<typeof startLivenessInbox>>, handle: string) {
  return {
    url: inbox.completionUrl(handle),
    token: `token-${handle}`,
    heartbeat_url: inbox.heartbeatUrl(handle),
    heartbeat_timeout_ms: 600,
  };
}

describe("the typed client's job handle, for third-party runners", () => {
  it("heartbeats every third of the timeout with the caller's progress, cut to 16 KiB, and hands a cancel to the caller once", async () => {
    const inbox = await startLivenessInbox({
      timeoutMs: 600,
      heartbeat: (_handle, attempt) => ({ status: 200, cancel: attempt >= 2 }),
    });
    let cancels = 0;
    const output = `${"x".repeat(20_000)}end`;
    const job = startJob(callbackOf(inbox, "j1"), {
      progress: () => ({ output_tail: output, output_bytes_total: output.length }),
      onCancel: () => {
        cancels += 1;
      },
    });
    const beats = await waitFor(() => {
      const seen = inbox.heartbeats("j1");
      return seen.length >= 4 ? seen : undefined;
    });
    job.stop();
    // Every 200 ms: each beat is sent a period after the one before was sent. A busy machine can
    // delay any beat in transit, the first one too, so the receiver's clock sees the gaps shorter
    // or longer; on average they are still at least half a period apart. Not a flood:
    const span = beats.at(-1)!.at - beats[0]!.at;
    expect(span / (beats.length - 1)).toBeGreaterThanOrEqual(100);
    expect(beats[0]!.body).toEqual({
      output_tail: output.slice(-16 * 1024),
      output_bytes_total: 20_003,
    });
    expect({ cancels, cancelRequested: job.cancelRequested }).toEqual({
      cancels: 1,
      cancelRequested: true,
    });
    await inbox.close();
  });

  it("complete stops the heartbeats first, retries 503 and 429, halves the output on 413, and is done on the 202", async () => {
    const script = [503, 429, 413] as const;
    const inbox = await startLivenessInbox({
      timeoutMs: 600,
      completion: (_handle, attempt) => script[attempt - 1] ?? 202,
    });
    const job = startJob(callbackOf(inbox, "j2"), { retryBaseMs: 20 });
    await waitFor(() => (inbox.heartbeats("j2").length >= 2 ? true : undefined));
    const outcome = await job.complete({
      status: "completed",
      exit_code: 0,
      output: "y".repeat(10_000),
      output_bytes_total: 10_000,
    });
    expect(outcome).toEqual({
      kind: "delivered",
      reply: { outcome: "accepted", generation: 1, disposition: "queued" },
    });
    const sent = inbox.completions("j2").map((arrival) => arrival.body);
    expect(sent).toHaveLength(4);
    expect(sent[3]).toMatchObject({ status: "completed", exit_code: 0, output_truncated: true });
    expect(Buffer.byteLength(sent[3].output)).toBeLessThan(5_100);
    await sleep(400);
    const firstCompletion = inbox.completions("j2")[0]!.at;
    expect(inbox.heartbeats("j2").filter((beat) => beat.at >= firstCompletion)).toEqual([]);
    expect(job.heartbeating).toBe(false);
    await inbox.close();
  });

  it("complete ends on a 409 or 410 with the problem, and throws on a refusal to fix (422)", async () => {
    const answers: Record<string, number> = { conflict: 409, gone: 410, invalid: 422 };
    const inbox = await startLivenessInbox({
      timeoutMs: 600,
      completion: (handle) => answers[handle] ?? 202,
    });
    const result = { status: "failed", exit_code: 1, output: "" } as const;
    const conflict = await startJob(callbackOf(inbox, "conflict")).complete(result);
    const gone = await startJob(callbackOf(inbox, "gone")).complete(result);
    expect([conflict, gone]).toEqual([
      { kind: "refused", problem: expect.objectContaining({ status: 409 }) },
      { kind: "refused", problem: expect.objectContaining({ status: 410 }) },
    ]);
    await expect(startJob(callbackOf(inbox, "invalid")).complete(result)).rejects.toBeInstanceOf(
      ExecInboxError,
    );
    expect(inbox.completions("invalid")).toHaveLength(1);
    await inbox.close();
  });
});
