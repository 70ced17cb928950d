import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

const resumeIds = async (sid: string) =>
  new Set((await api.deliveries(sid)).map((entry) => entry.headers["webhook-id"]));

describe("faults in the real runtime", () => {
  it("an agent host slower than the 10 s timeout is retried with the same resume_id", async () => {
    const sid = api.uniqueId("slow");
    await api.wokenSession(sid, [{ status: 200, delayMs: 11_000 }]);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(2), 25_000);
    expect((await resumeIds(sid)).size).toBe(1);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    expect((await api.view(sid)).resume.attempts).toBe(2);
  }, 40_000);

  it("an agent host answering 410 is a failed delivery: retried, nothing in the inbox lost", async () => {
    const sid = api.uniqueId("host-410");
    await api.wokenSession(sid, [410]);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(2));
    expect((await resumeIds(sid)).size).toBe(1);
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    expect((await api.view(sid)).inbox.pending).toBe(1);
  });

  it("alarms run again while a delivery is on the wire send nothing twice", async () => {
    const sid = api.uniqueId("alarm-twice");
    await api.wokenSession(sid, [{ status: 200, delayMs: 1500 }]);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    await runInDurableObject(api.stubOf(sid), async (instance) => {
      await Promise.all([instance.alarm(), instance.alarm()]);
    });
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    await api.sleep(300);
    expect(await api.deliveries(sid)).toHaveLength(1);
  });

  it("a run registered while the delivery is on the wire takes the resume; the late 2xx changes nothing", async () => {
    const sid = api.uniqueId("interleave");
    await api.wokenSession(sid, [{ status: 200, delayMs: 1500 }]);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    const resumeId = (await api.view(sid)).resume.resume_id;
    await api.registerRun(sid, { resume_id: resumeId });
    expect((await api.view(sid)).resume.state).toBe("completed");
    await api.sleep(2500);
    expect((await api.view(sid)).resume).toMatchObject({ resume_id: resumeId, state: "completed" });
    expect(await api.deliveries(sid)).toHaveLength(1);
    expect((await api.claim(sid)).body.claims).toHaveLength(1);
  });

  it("an object aborted mid-delivery delivers the same resume again after restart, once more", async () => {
    const sid = api.uniqueId("abort-mid");
    await api.wokenSession(sid, [{ status: 200, delayMs: 1500 }]);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    await abortAllDurableObjects();
    // The attempt was recorded before the POST, so the restarted object retries once the attempt's
    // window (10 s timeout + 5 s margin) has passed.
    await api.until(
      async () => expect((await api.view(sid)).resume.state).toBe("delivered"),
      30_000,
    );
    const sent = await api.deliveries(sid);
    expect(sent.length).toBe(2);
    expect((await resumeIds(sid)).size).toBe(1);
    expect((await api.view(sid)).inbox.pending).toBe(1);
  }, 40_000);
});
