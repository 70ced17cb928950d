// Ids are the clients' choice, and `__proto__`, `constructor` or `toString` are ids like any other:
// none of them may reach an object's prototype in the rules or the store.
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

const NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

describe("ids named like Object.prototype's members", () => {
  it.each(NAMES)(
    "a handle %s is reserved, waited on, completed, pulled and acked like any other",
    async (name) => {
      const sid = `proto-${name}-${Date.now()}`;
      await api.createSession(sid);
      // Before any reservation the handle is unknown: not a job found on the prototype.
      expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/${name}`)).status).toBe(404);
      const { job, callback } = await api.reserve(sid, name, "echo hi");
      expect(job).toMatchObject({ handle: name, status: "running" });
      expect((await api.reserve(sid, name, "echo hi")).callback.token).toBe(callback.token);
      const runId = await api.registerRun(sid);
      expect((await api.suspend(sid, runId, [name])).status).toBe(200);
      const accepted = await api.complete(sid, name, callback.token, api.result(0, "hi"));
      expect([accepted.status, accepted.body.disposition]).toEqual([202, "resume_scheduled"]);
      const pulled = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs/${name}`)).body;
      expect(pulled).toMatchObject({ handle: name, status: "completed", output: "hi" });
      await api.call("POST", `/v1/sessions/${sid}/runs`, { body: {} });
      const claimed = (await api.claim(sid)).body.claims;
      expect(claimed).toHaveLength(1);
      const acked = await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, {
        body: { ids: [claimed[0].envelope.id, name] },
      });
      expect(acked.body).toEqual({ acked: [claimed[0].envelope.id], unknown: [name] });
    },
  );

  it.each(NAMES)("a session id %s is created, read and deleted like any other", async (name) => {
    const created = await api.call("POST", "/v1/sessions", { body: { id: name } });
    expect(created.status).toBe(201);
    expect((await api.call("GET", `/v1/sessions/${name}`)).body.id).toBe(name);
    expect((await api.call("DELETE", `/v1/sessions/${name}`)).status).toBe(204);
  });
});
