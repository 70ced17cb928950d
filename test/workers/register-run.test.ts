// Registering a run: a resume id the session does not hold is refused, so an agent host that
// typed it wrong (or pasted a placeholder) is told instead of silently taking the pending resume.
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { OPERATOR_TOKEN } from "../support/secrets";

describe("registering a run with a resume id", () => {
  it("that names no resume of the session gets 409 invalid_transition and takes nothing", async () => {
    const sid = api.uniqueId("register-typo");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    await api.complete(sid, "h1", tokens.h1!, api.result(0, "done"));
    const before = await api.view(sid);
    expect(before.status).toBe("resuming");

    const refused = await api.call("POST", `/v1/sessions/${sid}/runs`, {
      body: { resume_id: "<resume_id>" },
    });
    expect(refused.status).toBe(409);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.body).toMatchObject({
      code: "invalid_transition",
      detail: `resume <resume_id> is not this session's resume: its resume is ${before.resume.resume_id}`,
    });
    const after = await api.view(sid);
    expect(after.status).toBe("resuming");
    expect(after.run).toBeNull();
    expect(after.resume.resume_id).toBe(before.resume.resume_id);
  });

  it("that names the session's resume registers the run and takes it", async () => {
    const sid = api.uniqueId("register-right");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    await api.complete(sid, "h1", tokens.h1!, api.result(0, "done"));
    const resumeId = (await api.view(sid)).resume.resume_id;
    const runId = await api.registerRun(sid, { resume_id: resumeId });
    const after = await api.view(sid);
    expect(after).toMatchObject({ status: "running", run: { run_id: runId } });
    expect(after.resume).toMatchObject({ resume_id: resumeId, state: "completed" });
  });

  it("that names a resume a finished run already took gets 409 invalid_transition, however often, and records nothing", async () => {
    const sid = api.uniqueId("register-replay");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    await api.complete(sid, "h1", tokens.h1!, api.result(0, "done"));
    const resumeId = (await api.view(sid)).resume.resume_id;
    const runId = await api.registerRun(sid, { run_id: `run-${resumeId}`, resume_id: resumeId });
    const ids = (await api.claim(sid)).body.claims.map(
      (c: { envelope: { id: string } }) => c.envelope.id,
    );
    await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, { body: { ids } });
    expect((await api.call("POST", `/v1/sessions/${sid}/runs/${runId}/finish`)).status).toBe(200);
    const trail = async () =>
      (
        await api.call("GET", `/v1/ops/sessions/default/${sid}/events?limit=500`, {
          token: OPERATOR_TOKEN,
        })
      ).body.events as Array<{ type: string }>;
    const before = await trail();

    // A replayed webhook makes the kit register the same run for the same resume again.
    for (let replay = 0; replay < 5; replay++) {
      const refused = await api.call("POST", `/v1/sessions/${sid}/runs`, {
        body: { run_id: runId, resume_id: resumeId },
      });
      expect(refused.status).toBe(409);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
      expect(refused.body).toMatchObject({
        code: "invalid_transition",
        detail: `resume ${resumeId} was already taken by a run; a finished run does not register again`,
      });
    }
    expect(await api.view(sid)).toMatchObject({
      status: "idle",
      run: null,
      resume: { resume_id: resumeId, state: "completed" },
    });
    expect(await trail()).toEqual(before);
  });
});

describe("registering a run id that already finished", () => {
  const trail = async (sid: string) =>
    (
      await api.call("GET", `/v1/ops/sessions/default/${sid}/events?limit=500`, {
        token: OPERATOR_TOKEN,
      })
    ).body.events as Array<{ type: string; detail: Record<string, unknown> }>;
  const finish = (sid: string, runId: string) =>
    api.call("POST", `/v1/sessions/${sid}/runs/${runId}/finish`);

  it("a finished run id does not register again: 409 invalid_transition, nothing recorded", async () => {
    const sid = api.uniqueId("register-finished");
    await api.createSession(sid);
    expect(await api.registerRun(sid, { run_id: "run-x" })).toBe("run-x");
    expect((await finish(sid, "run-x")).status).toBe(200);
    const trailBefore = JSON.stringify(await trail(sid));
    const viewBefore = JSON.stringify(await api.view(sid));
    expect(JSON.parse(viewBefore)).toMatchObject({ status: "idle", run: null });

    // The attack replayed the bare run id; each replay is refused the same way.
    for (let replay = 0; replay < 6; replay++) {
      const refused = await api.call("POST", `/v1/sessions/${sid}/runs`, {
        body: { run_id: "run-x" },
      });
      expect(refused.status).toBe(409);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
      expect(refused.body).toMatchObject({
        code: "invalid_transition",
        detail: "run run-x already finished in this session lifetime; a run id is used once",
      });
    }
    expect(JSON.stringify(await api.view(sid))).toBe(viewBefore);
    expect(JSON.stringify(await trail(sid))).toBe(trailBefore);
    expect((await trail(sid)).filter((event) => event.type === "run_registered")).toHaveLength(1);

    // A new run id still registers, and the active run registers again idempotently.
    const again = await api.call("POST", `/v1/sessions/${sid}/runs`, { body: { run_id: "run-y" } });
    expect(again.status).toBe(201);
    const same = await api.call("POST", `/v1/sessions/${sid}/runs`, { body: { run_id: "run-y" } });
    expect(same.status).toBe(201);
    expect(same.body).toMatchObject({ run_id: "run-y" });
    expect((await trail(sid)).filter((event) => event.type === "run_registered")).toHaveLength(2);
  });

  it("after the session is deleted and re-created the same run id registers", async () => {
    const sid = api.uniqueId("register-new-lifetime");
    await api.createSession(sid);
    await api.registerRun(sid, { run_id: "run-x" });
    expect((await finish(sid, "run-x")).status).toBe(200);
    expect((await api.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    await api.createSession(sid);

    const registered = await api.call("POST", `/v1/sessions/${sid}/runs`, {
      body: { run_id: "run-x" },
    });
    expect(registered.status).toBe(201);
    expect(await api.view(sid)).toMatchObject({ status: "running", run: { run_id: "run-x" } });
  });
});
