import { describe, expect, it } from "vitest";
import * as api from "../support/api";

const stats = async (sid: string) => (await api.call("GET", `/v1/sessions/${sid}/stats`)).body;

// Real alarms in the runtime: revision 1 fired the alarm 5,457 times for one 8 s delivery.
describe("a slow agent host costs nothing extra", () => {
  it("a host that answers after 8 s is delivered once with at most two alarm invocations", async () => {
    const sid = api.uniqueId("slow-8s");
    await api.wokenSession(sid, [{ status: 200, delayMs: 8_000 }]);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const sent = await api.deliveries(sid);
    expect(sent).toHaveLength(1);
    expect((await api.view(sid)).resume.attempts).toBe(1);
    expect((await stats(sid)).alarms).toBeLessThanOrEqual(2);
  }, 40_000);

  it("after a slow failed attempt the backoff counts from its end, and each attempt costs at most two alarms", async () => {
    const sid = api.uniqueId("slow-fail");
    // Fails fast, then hangs 8 s and fails, then answers.
    await api.wokenSession(sid, [500, { status: 503, delayMs: 8_000 }, 200]);
    await api.until(
      async () => expect((await api.view(sid)).resume.state).toBe("delivered"),
      45_000,
    );
    const sent = await api.deliveries(sid);
    expect(sent).toHaveLength(3);
    const [, second, third] = sent as [unknown, { received_at: number }, { received_at: number }];
    // The second attempt's answer came 8 s after it arrived; the third waits a backoff after that
    // (attempt 2's backoff is 1–2 s with jitter), not after the attempt started.
    const pause = third.received_at - (second.received_at + 8_000);
    expect(pause).toBeGreaterThanOrEqual(950);
    expect(pause).toBeLessThan(6_000);
    expect(new Set(sent.map((entry) => entry.headers["webhook-id"])).size).toBe(1);
    const view3 = await api.view(sid);
    expect(view3.resume.attempts).toBe(3);
    expect((await stats(sid)).alarms).toBeLessThanOrEqual(2 * 3);
  }, 60_000);
});
