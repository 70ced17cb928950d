// Registering a run: a resume id the session does not hold is refused, so an agent host that
// typed it wrong (or pasted a placeholder) is told instead of silently taking the pending resume.
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

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
});
