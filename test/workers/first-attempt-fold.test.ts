// The first delivery attempt folded into the waking commit (docs/design/wake-and-delivery.md)
// keeps exactly-once, under the attacks that try to make it deliver twice or not at all.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

const ops = (method: string, path: string) =>
  api.call(method, `/v1/ops/sessions/default/${path}`, { token: OPERATOR_TOKEN });
/** The object's courier, in its private loop, where the resume POST is a replaceable capability. */
interface Internals {
  loop: { courier: { post(...args: unknown[]): Promise<unknown> } };
}
const bodies = async (sid: string) =>
  (await api.deliveries(sid)).map((entry) => JSON.parse(entry.body) as Record<string, any>);

describe("the first attempt folded into the waking commit", () => {
  it("a completion arriving while the folded POST is on the wire is queued into it: one webhook", async () => {
    const sid = api.uniqueId("fold-queued");
    await api.scriptHost(sid, [{ status: 200, delayMs: 1500 }]);
    const { tokens } = await api.suspendedOn(sid, ["h1", "h2"], { wake: "any" });
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "a"))).body.disposition).toBe(
      "resume_scheduled",
    );
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    expect((await api.complete(sid, "h2", tokens.h2!, api.result(0, "b"))).body.disposition).toBe(
      "queued",
    );
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    await api.sleep(500);
    expect((await bodies(sid)).map((b) => b.inbox.pending)).toEqual([1]);
    expect((await api.view(sid)).resume.attempts).toBe(1);
  });

  it("a run that registers and finishes while the folded POST is on the wire gets its own resume after it, once", async () => {
    const sid = api.uniqueId("fold-finish");
    await api.scriptHost(sid, [{ status: 200, delayMs: 2000 }]);
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    await api.complete(sid, "h1", tokens.h1!, api.result(0, "a"));
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    const first = (await api.view(sid)).resume.resume_id;
    const runId = await api.registerRun(sid, { resume_id: first });
    expect((await api.call("POST", `/v1/sessions/${sid}/runs/${runId}/finish`)).status).toBe(200);
    // One POST of a session on the wire at a time: the new resume waits for the first's answer.
    expect((await api.view(sid)).resume).toMatchObject({ state: "scheduled", attempts: 0 });
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(2), 10_000);
    await api.sleep(500);
    const [one, two] = await api.deliveries(sid);
    expect(two!.received_at - one!.received_at).toBeGreaterThanOrEqual(1900);
    const sent = await bodies(sid);
    expect(sent.map((b) => [b.reason, b.inbox.pending])).toEqual([
      ["background_exec_completed", 1],
      ["inbox_pending", 1],
    ]);
    expect(sent[1]!.resume_id).not.toBe(first);
  }, 20_000);

  it("a POST on the wire holds back only the next attempt: a ceiling that passes meanwhile fires at its time", async () => {
    const sid = api.uniqueId("fold-held-ceiling");
    // The first webhook is answered after 8 s; the ceiling's webhook at once.
    await api.scriptHost(sid, [{ status: 200, delayMs: 8_000 }, 200]);
    const { tokens } = await api.suspendedOn(sid, ["h1", "h2"], { wake: "any" });
    await api.complete(sid, "h1", tokens.h1!, api.result(0, "a"));
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    // The host takes the resume while its answer is still on the wire, and waits for h2 for 1 s.
    const first = (await api.view(sid)).resume.resume_id;
    const runId = await api.registerRun(sid, { resume_id: first });
    expect((await api.suspend(sid, runId, ["h2"], { ceiling_ms: 1_000 })).status).toBe(200);
    const ceilingAt = Date.parse((await api.view(sid)).waiting_for_bash.ceiling_at);
    await api.until(async () => expect((await api.view(sid)).waiting_for_bash).toBeNull(), 20_000);
    expect(Date.now() - ceilingAt).toBeLessThan(1_500);
    // Its wake waits for the first POST's answer, then goes out once.
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(2), 20_000);
    const [, second] = await bodies(sid);
    expect(second).toMatchObject({ reason: "background_exec_wait_expired" });
  }, 40_000);

  it("mark-lost and expire-wait fold their first attempt with the admitted envelope counted", async () => {
    for (const action of ["mark-lost", "expire-wait"] as const) {
      const sid = api.uniqueId(`fold-${action}`);
      await api.suspendedOn(sid, ["h1"]);
      const path = action === "mark-lost" ? `${sid}/exec-jobs/h1/mark-lost` : `${sid}/expire-wait`;
      expect((await ops("POST", path)).status).toBe(200);
      expect((await api.view(sid)).resume.attempts).toBe(1);
      await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
      expect((await bodies(sid)).map((b) => b.inbox.pending)).toEqual([1]);
    }
  });

  it("a delivery that throws leaves the attempt recorded: the alarm's retry still delivers", async () => {
    const sid = api.uniqueId("fold-throws");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    let thrown = false;
    await runInDurableObject(api.stubOf(sid), (object) => {
      const { courier } = (object as unknown as Internals).loop;
      const real = courier.post.bind(courier);
      let calls = 0;
      courier.post = (...args: unknown[]) => {
        calls += 1;
        if (calls > 1) return real(...args);
        thrown = true;
        return Promise.reject(new Error("injected"));
      };
    });
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "a"))).status).toBe(202);
    await api.until(async () => expect(thrown).toBe(true));
    expect(await api.deliveries(sid)).toHaveLength(0);
    expect((await api.view(sid)).resume).toMatchObject({ state: "scheduled", attempts: 1 });
    // The attempt's window (10 s + 5 s) passes; the alarm armed by the commit retries.
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1), 25_000);
    await api.until(async () =>
      expect((await api.view(sid)).resume).toMatchObject({ attempts: 2 }),
    );
  }, 40_000);
});
