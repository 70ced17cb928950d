import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  call,
  claim,
  complete,
  createSession,
  deliveries,
  fireAlarm,
  registerRun,
  reserve,
  result,
  SIGNING_SECRET,
  scriptHost,
  suspendedOn,
  uniqueId,
  until,
  view,
} from "../support/api";

async function wokenSession(sid: string, statuses: number[]) {
  await scriptHost(sid, statuses);
  const { tokens } = await suspendedOn(sid, ["h1"]);
  await complete(sid, "h1", tokens.h1!, result(0, "x"));
}

describe("resume delivery", () => {
  it("an agent host answering 500 and then failing the connection gets retries with one resume_id and growing backoff", async () => {
    const sid = uniqueId("retry");
    await wokenSession(sid, [500, 0]);
    await until(async () => expect(await deliveries(sid)).toHaveLength(3));
    const sent = await deliveries(sid);
    expect(new Set(sent.map((delivery) => delivery.headers["webhook-id"])).size).toBe(1);
    for (const delivery of sent)
      expect(() =>
        new Webhook(SIGNING_SECRET).verify(delivery.body, delivery.headers),
      ).not.toThrow();
    const gaps = [
      sent[1]!.received_at - sent[0]!.received_at,
      sent[2]!.received_at - sent[1]!.received_at,
    ];
    expect(gaps[0]).toBeGreaterThanOrEqual(900);
    expect(gaps[1]).toBeGreaterThanOrEqual(gaps[0]! * 0.9);
    await until(async () =>
      expect((await view(sid)).resume).toMatchObject({ state: "delivered", attempts: 3 }),
    );
    expect((await view(sid)).inbox.pending).toBe(1);
  });

  it("a redirect is a failed delivery and is not followed", async () => {
    const sid = uniqueId("redirect");
    await wokenSession(sid, [302]);
    await until(async () => expect(await deliveries(sid)).toHaveLength(2));
    expect(await deliveries("elsewhere")).toEqual([]);
    const resume = (await view(sid)).resume;
    expect(resume.state).toBe("delivered");
  });

  it("after RESUME_MAX_ATTEMPTS failures the resume is failed, the session idle, the inbox intact; the next wake is new", async () => {
    const sid = uniqueId("give-up");
    await wokenSession(sid, [503, 503, 503, 503]);
    // RESUME_MAX_ATTEMPTS is 4 in the test configuration: backoff 1 s, 2 s, 4 s.
    await until(async () => expect((await view(sid)).resume.state).toBe("failed"), 20_000);
    const failed = await view(sid);
    expect(failed.status).toBe("idle");
    expect(failed.resume).toMatchObject({ attempts: 4, last_error: "agent host answered 503" });
    expect(failed.inbox.pending).toBe(1);
    expect(await deliveries(sid)).toHaveLength(4);

    const next = await reserve(sid, "h2");
    const answer = await complete(sid, "h2", next.callback.token, result(0, "y"));
    expect(answer.body.disposition).toBe("resume_scheduled");
    await until(async () => expect(await deliveries(sid)).toHaveLength(5));
    const sent = await deliveries(sid);
    expect(sent[4]!.headers["webhook-id"]).not.toBe(failed.resume.resume_id);
    expect(JSON.parse(sent[4]!.body).inbox.pending).toBe(2);
  }, 30_000);

  it("registering a run takes the resume: it completes and is never delivered again", async () => {
    const sid = uniqueId("taken");
    await wokenSession(sid, [500]);
    await until(async () => expect(await deliveries(sid)).toHaveLength(1));
    const resumeId = (await view(sid)).resume.resume_id;
    await registerRun(sid, { resume_id: resumeId });
    const taken = await view(sid);
    expect(taken.resume).toMatchObject({ resume_id: resumeId, state: "completed" });
    expect(taken.run.resume_id).toBe(resumeId);
    await fireAlarm(sid);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await deliveries(sid)).toHaveLength(1);
  });

  it("an alarm run again by hand after delivery sends nothing more", async () => {
    const sid = uniqueId("rerun");
    await wokenSession(sid, []);
    await until(async () => expect(await deliveries(sid)).toHaveLength(1));
    for (let i = 0; i < 3; i += 1) await fireAlarm(sid);
    expect(await deliveries(sid)).toHaveLength(1);
  });

  it("without resume_url or RESUME_WEBHOOK_URL the resume stays visible as no_target until a run takes it", async () => {
    const sid = uniqueId("no-target");
    const created = await call("POST", "/v1/sessions", { body: { id: sid } });
    expect(created.status).toBe(201);
    const job = await reserve(sid, "h1");
    await complete(sid, "h1", job.callback.token, result(0, "x"));
    await until(async () => expect((await view(sid)).resume.state).toBe("no_target"));
    expect((await view(sid)).status).toBe("resuming");
    await registerRun(sid);
    expect((await view(sid)).resume.state).toBe("completed");
    expect((await claim(sid)).body.claims).toHaveLength(1);
  });

  it("a resume_url outside the allowlist or with user info is refused with 422 and creates nothing", async () => {
    for (const url of [
      "http://169.254.169.254/latest",
      "http://user:pw@hooks.test/x",
      "http://hooks.test:8080/x",
      "file:///etc/passwd",
    ]) {
      const sid = uniqueId("ssrf");
      const answer = await call("POST", "/v1/sessions", { body: { id: sid, resume_url: url } });
      expect(answer.status).toBe(422);
      expect(answer.body.code).toBe("invalid_request");
      expect((await call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
    }
  });

  it("a session created without a job gets nothing delivered", async () => {
    const sid = uniqueId("quiet");
    await createSession(sid);
    expect(await fireAlarm(sid)).toBe(false);
    expect(await deliveries(sid)).toEqual([]);
  });
});
