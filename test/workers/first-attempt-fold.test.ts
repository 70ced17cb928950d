// The first delivery attempt folded into the waking commit (decision 124) keeps exactly-once: the
// attacks of its review, kept as tests.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  call,
  complete,
  deliveries,
  registerRun,
  result,
  scriptHost,
  sleep,
  stubOf,
  suspendedOn,
  uniqueId,
  until,
  view,
} from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

const ops = (method: string, path: string) =>
  call(method, `/v1/ops/sessions/default/${path}`, { token: OPERATOR_TOKEN });
/** The object's protected internals, reached the way faults.test.ts reaches alarm(). */
interface Internals {
  deliver(effect: unknown): Promise<void>;
  runningTimers: boolean;
}
const bodies = async (sid: string) =>
  (await deliveries(sid)).map((entry) => JSON.parse(entry.body) as Record<string, any>);

describe("the first attempt folded into the waking commit", () => {
  it("a completion arriving while the folded POST is on the wire is queued into it: one webhook", async () => {
    const sid = uniqueId("fold-queued");
    await scriptHost(sid, [{ status: 200, delayMs: 1500 }]);
    const { tokens } = await suspendedOn(sid, ["h1", "h2"], { wake: "any" });
    expect((await complete(sid, "h1", tokens.h1!, result(0, "a"))).body.disposition).toBe(
      "resume_scheduled",
    );
    await until(async () => expect(await deliveries(sid)).toHaveLength(1));
    expect((await complete(sid, "h2", tokens.h2!, result(0, "b"))).body.disposition).toBe("queued");
    await until(async () => expect((await view(sid)).resume.state).toBe("delivered"));
    await sleep(500);
    expect((await bodies(sid)).map((b) => b.inbox.pending)).toEqual([1]);
    expect((await view(sid)).resume.attempts).toBe(1);
  });

  it("a run that registers and finishes while the folded POST is on the wire gets its own resume after it, once", async () => {
    const sid = uniqueId("fold-finish");
    await scriptHost(sid, [{ status: 200, delayMs: 1500 }]);
    const { tokens } = await suspendedOn(sid, ["h1"]);
    await complete(sid, "h1", tokens.h1!, result(0, "a"));
    await until(async () => expect(await deliveries(sid)).toHaveLength(1));
    const first = (await view(sid)).resume.resume_id;
    const runId = await registerRun(sid, { resume_id: first });
    expect((await call("POST", `/v1/sessions/${sid}/runs/${runId}/finish`)).status).toBe(200);
    await until(async () => expect(await deliveries(sid)).toHaveLength(2));
    await sleep(500);
    const sent = await bodies(sid);
    expect(sent.map((b) => [b.reason, b.inbox.pending])).toEqual([
      ["background_exec_completed", 1],
      ["inbox_pending", 1],
    ]);
    expect(sent[1]!.resume_id).not.toBe(first);
  });

  it("mark-lost and expire-wait fold their first attempt with the admitted envelope counted", async () => {
    for (const action of ["mark-lost", "expire-wait"] as const) {
      const sid = uniqueId(`fold-${action}`);
      await suspendedOn(sid, ["h1"]);
      const path = action === "mark-lost" ? `${sid}/exec-jobs/h1/mark-lost` : `${sid}/expire-wait`;
      expect((await ops("POST", path)).status).toBe(200);
      expect((await view(sid)).resume.attempts).toBe(1);
      await until(async () => expect((await view(sid)).resume.state).toBe("delivered"));
      expect((await bodies(sid)).map((b) => b.inbox.pending)).toEqual([1]);
    }
  });

  it("a delivery that throws does not leave the timers locked: the alarm's retry still delivers", async () => {
    const sid = uniqueId("fold-throws");
    const { tokens } = await suspendedOn(sid, ["h1"]);
    await runInDurableObject(stubOf(sid), (object) => {
      const instance = object as unknown as Internals;
      const real = instance.deliver.bind(instance);
      let calls = 0;
      instance.deliver = (effect: unknown) => {
        calls += 1;
        return calls === 1 ? Promise.reject(new Error("injected")) : real(effect);
      };
    });
    expect((await complete(sid, "h1", tokens.h1!, result(0, "a"))).status).toBe(202);
    await until(async () => {
      const locked = await runInDurableObject(
        stubOf(sid),
        (object) => (object as unknown as Internals).runningTimers,
      );
      expect(locked).toBe(false);
    });
    expect(await deliveries(sid)).toHaveLength(0);
    expect((await view(sid)).resume).toMatchObject({ state: "scheduled", attempts: 1 });
    // The attempt's window (10 s + 5 s) passes; the alarm armed by the commit retries.
    await until(async () => expect(await deliveries(sid)).toHaveLength(1), 25_000);
    await until(async () => expect((await view(sid)).resume).toMatchObject({ attempts: 2 }));
  }, 40_000);
});
