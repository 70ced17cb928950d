// Liveness on the real wrangler dev when an object is closed for idleness (after 10 s locally)
// and started again by its own alarm: that start is no downtime, so a silent job is lost on time
// (contract §9 "never never"). In a file of its own: a restart beside it would be a real one.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { useWranglerDev } from "../support/local-dev";
import { api } from "../support/local-stack";

describe("liveness across an idle close under the real wrangler dev", () => {
  const local = useWranglerDev("liveness-idle");
  const agent = (method: string, path: string, body?: unknown) =>
    api(local.dev.base, method, path, body);

  it("a silent job in an object closed when idle is lost on time: its own alarm's start is no downtime", async () => {
    const sid = `liveness-idle-${Date.now()}`;
    expect((await agent("POST", "/v1/sessions", { id: sid })).status).toBe(201);
    // Longer than the 10 s after which an idle object is closed, so its alarm starts it again.
    const timeoutMs = 12_000;
    const reservedAt = Date.now();
    const reserved = await agent("POST", `/v1/sessions/${sid}/exec-jobs`, {
      handle: "quiet",
      command: "run quiet",
      heartbeat_timeout_ms: timeoutMs,
    });
    expect(reserved.status).toBe(201);
    await sleep(timeoutMs + 3_000);
    const quiet = (await agent("GET", `/v1/sessions/${sid}/exec-jobs/quiet`)).body;
    expect(quiet).toMatchObject({ status: "lost", ended_by: "heartbeat_timeout" });
    const lostAfter = Date.parse(quiet.completed_at) - reservedAt;
    expect(lostAfter).toBeGreaterThanOrEqual(timeoutMs);
    // On time: not a grace (a whole timeout) later; the slack is the alarm's own on a busy machine.
    expect(lostAfter).toBeLessThan(timeoutMs + 3_000);
  }, 60_000);
});
