import { describe, expect, it, vi } from "vitest";
import * as api from "../support/api";

// workerd keeps each distinct SQL string a session object runs prepared for the object's life, so
// the strings a session runs must be a fixed set: no SQL text built from a count or a value.
describe("what an open session object keeps prepared", () => {
  it("a second wake of the same session prepares nothing new", async () => {
    const sid = api.uniqueId("statements-again");
    const { tokens } = await api.suspendedOn(sid, ["h1", "h2"], { wake: "any" });
    await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"));
    await vi.waitFor(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const first = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body.sql_statements;
    const view = await api.view(sid);
    const run = await api.call("POST", `/v1/sessions/${sid}/runs`, {
      body: { resume_id: view.resume.resume_id },
    });
    await api.suspend(sid, run.body.run_id, ["h2"]);
    await api.complete(sid, "h2", tokens.h2!, api.result(0, "y"));
    await vi.waitFor(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    const second = (await api.call("GET", `/v1/sessions/${sid}/stats`)).body.sql_statements;
    expect(second - first).toBe(0);
  });
});
