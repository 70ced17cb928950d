import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

describe("resume delivery", () => {
  it("an agent host answering 500 and then failing the connection gets retries with one resume_id and growing backoff", async () => {
    const sid = api.uniqueId("retry");
    await api.wokenSession(sid, [500, 0]);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(3));
    const sent = await api.deliveries(sid);
    expect(new Set(sent.map((delivery) => delivery.headers["webhook-id"])).size).toBe(1);
    for (const delivery of sent)
      expect(() =>
        new Webhook(api.SIGNING_SECRET).verify(delivery.body, delivery.headers),
      ).not.toThrow();
    const gaps = [
      sent[1]!.received_at - sent[0]!.received_at,
      sent[2]!.received_at - sent[1]!.received_at,
    ];
    expect(gaps[0]).toBeGreaterThanOrEqual(900);
    expect(gaps[1]).toBeGreaterThanOrEqual(gaps[0]! * 0.9);
    await api.until(async () =>
      expect((await api.view(sid)).resume).toMatchObject({ state: "delivered", attempts: 3 }),
    );
    expect((await api.view(sid)).inbox.pending).toBe(1);
  });

  it("a redirect is a failed delivery and is not followed", async () => {
    const sid = api.uniqueId("redirect");
    await api.wokenSession(sid, [302]);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(2));
    expect(await api.deliveries("elsewhere")).toEqual([]);
    const resume = (await api.view(sid)).resume;
    expect(resume.state).toBe("delivered");
  });

  it("after RESUME_MAX_ATTEMPTS failures the resume is failed, the session idle, the inbox intact; the next wake is new", async () => {
    const sid = api.uniqueId("give-up");
    await api.wokenSession(sid, [503, 503, 503, 503]);
    // RESUME_MAX_ATTEMPTS is 4 in the test configuration: backoff 1 s, 2 s, 4 s.
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("failed"), 20_000);
    const failed = await api.view(sid);
    expect(failed.status).toBe("idle");
    expect(failed.resume).toMatchObject({ attempts: 4, last_error: "agent host answered 503" });
    expect(failed.inbox.pending).toBe(1);
    expect(await api.deliveries(sid)).toHaveLength(4);

    const next = await api.reserve(sid, "h2");
    const answer = await api.complete(sid, "h2", next.callback.token, api.result(0, "y"));
    expect(answer.body.disposition).toBe("resume_scheduled");
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(5));
    const sent = await api.deliveries(sid);
    expect(sent[4]!.headers["webhook-id"]).not.toBe(failed.resume.resume_id);
    expect(JSON.parse(sent[4]!.body).inbox.pending).toBe(2);
  }, 30_000);

  it("registering a run takes the resume: it completes and is never delivered again", async () => {
    const sid = api.uniqueId("taken");
    await api.wokenSession(sid, [500]);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    const resumeId = (await api.view(sid)).resume.resume_id;
    await api.registerRun(sid, { resume_id: resumeId });
    const taken = await api.view(sid);
    expect(taken.resume).toMatchObject({ resume_id: resumeId, state: "completed" });
    expect(taken.run.resume_id).toBe(resumeId);
    await api.fireAlarm(sid);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await api.deliveries(sid)).toHaveLength(1);
  });

  it("an alarm run again by hand after delivery sends nothing more", async () => {
    const sid = api.uniqueId("rerun");
    await api.wokenSession(sid, []);
    await api.until(async () => expect(await api.deliveries(sid)).toHaveLength(1));
    for (let i = 0; i < 3; i += 1) await api.fireAlarm(sid);
    expect(await api.deliveries(sid)).toHaveLength(1);
  });

  it("without resume_url or RESUME_WEBHOOK_URL the resume stays visible as no_target until a run takes it", async () => {
    const sid = api.uniqueId("no-target");
    const created = await api.call("POST", "/v1/sessions", { body: { id: sid } });
    expect(created.status).toBe(201);
    const job = await api.reserve(sid, "h1");
    await api.complete(sid, "h1", job.callback.token, api.result(0, "x"));
    await api.until(async () => expect((await api.view(sid)).resume.state).toBe("no_target"));
    expect((await api.view(sid)).status).toBe("resuming");
    await api.registerRun(sid);
    expect((await api.view(sid)).resume.state).toBe("completed");
    expect((await api.claim(sid)).body.claims).toHaveLength(1);
  });

  it("a resume_url outside the allowlist or with user info is refused with 422 and creates nothing", async () => {
    for (const url of [
      "http://169.254.169.254/latest",
      "http://user:pw@hooks.test/x",
      "http://hooks.test:8080/x",
      "file:///etc/passwd",
    ]) {
      const sid = api.uniqueId("ssrf");
      const answer = await api.call("POST", "/v1/sessions", { body: { id: sid, resume_url: url } });
      expect(answer.status).toBe(422);
      expect(answer.body.code).toBe("invalid_request");
      expect((await api.call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
    }
  });

  it("a session created without a job gets nothing delivered", async () => {
    const sid = api.uniqueId("quiet");
    await api.createSession(sid);
    expect(await api.fireAlarm(sid)).toBe(false);
    expect(await api.deliveries(sid)).toEqual([]);
  });
});
