import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { mintCallbackToken } from "../../src/auth/callback-token";
import * as api from "../support/api";
import { AGENT_TOKEN, CALLBACK_SECRET_NEW, CALLBACK_SECRET_OLD } from "../support/secrets";

describe("exec jobs", () => {
  it("reserving the same handle and command again returns the same job and the identical token", async () => {
    const sid = api.uniqueId("reserve");
    await api.createSession(sid);
    const first = await api.call("POST", `/v1/sessions/${sid}/exec-jobs`, {
      body: { handle: "h1", command: "ls" },
    });
    expect(first.status).toBe(201);
    expect(first.body.callback.url).toBe(
      `http://exec-inbox.test/v1/sessions/${sid}/exec-jobs/h1/completion`,
    );
    const again = await api.call("POST", `/v1/sessions/${sid}/exec-jobs`, {
      body: { handle: "h1", command: "ls" },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const other = await api.call("POST", `/v1/sessions/${sid}/exec-jobs`, {
      body: { handle: "h1", command: "rm" },
    });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("job_conflict");
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs).toHaveLength(1);
  });

  it("a token signed by a secret still listed is handed out again after rotation; a retired one is replaced", async () => {
    const sid = api.uniqueId("rotate");
    const created = await api.createSession(sid);
    await api.reserve(sid, "h1");
    const claims = {
      tenant: "default",
      sessionId: sid,
      lifetime: created.lifetime,
      handle: "h1",
      seq: 1,
    };
    // As if the job had been reserved before `test-callback-secret-new` was put first.
    const oldToken = mintCallbackToken(CALLBACK_SECRET_OLD, claims);
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE jobs SET callback_token = ?", oldToken);
    });
    await abortAllDurableObjects();
    expect((await api.reserve(sid, "h1")).callback.token).toBe(oldToken);
    expect((await api.complete(sid, "h1", oldToken, api.result(0, "x"))).status).toBe(202);

    await api.reserve(sid, "h2");
    const retired = mintCallbackToken("a-secret-no-longer-listed", {
      ...claims,
      handle: "h2",
      seq: 2,
    });
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE jobs SET callback_token = ? WHERE handle = 'h2'", retired);
    });
    await abortAllDurableObjects();
    const renewed = (await api.reserve(sid, "h2")).callback.token;
    expect(renewed).not.toBe(retired);
    expect(renewed).toBe(
      mintCallbackToken(CALLBACK_SECRET_NEW, { ...claims, handle: "h2", seq: 2 }),
    );
    expect((await api.complete(sid, "h2", retired, api.result(0, "x"))).status).toBe(401);
  });

  it("a callback token of another job or another session is refused as unauthorized", async () => {
    const sid = api.uniqueId("tokens");
    const other = api.uniqueId("tokens-other");
    await api.createSession(sid);
    await api.createSession(other);
    const h1 = await api.reserve(sid, "h1");
    await api.reserve(sid, "h2");
    const foreign = await api.reserve(other, "h1");
    const before = await api.view(sid);
    const tampered = `${h1.callback.token.slice(0, -2)}AA`;
    for (const [handle, token] of [
      ["h2", h1.callback.token],
      ["h1", foreign.callback.token],
      ["h1", tampered],
      ["h1", h1.callback.token.slice(0, 20)],
      ["h1", AGENT_TOKEN],
    ] as const) {
      const answer = await api.complete(sid, handle, token, api.result(0, "x"));
      expect(answer.status).toBe(401);
      expect(answer.body.code).toBe("unauthorized");
    }
    expect(await api.view(sid)).toEqual(before);
  });

  it("a different result for a job that has one is a result_conflict: the first wins", async () => {
    const sid = api.uniqueId("conflict");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    expect((await api.complete(sid, "h1", job.callback.token, api.result(0, "first"))).status).toBe(
      202,
    );
    const second = await api.complete(sid, "h1", job.callback.token, api.result(1, "second"));
    expect(second.status).toBe(409);
    expect(second.body.code).toBe("result_conflict");
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body).toMatchObject({
      exit_code: 0,
      output: "first",
    });
  });

  it("an observed result during a run is pullable but admits nothing to the inbox", async () => {
    const sid = api.uniqueId("observed");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    await api.registerRun(sid);
    const answer = await api.complete(
      sid,
      "h1",
      job.callback.token,
      api.result(0, "seen", { observed: true }),
    );
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ outcome: "accepted", generation: 0, disposition: "observed" });
    expect((await api.view(sid)).inbox).toEqual({ pending: 0, claimed: 0, generation: 0 });
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.output).toBe("seen");
  });

  it("an output over MAX_OUTPUT_BYTES is refused with 413 and stores nothing", async () => {
    const sid = api.uniqueId("big-output");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    const answer = await api.complete(
      sid,
      "h1",
      job.callback.token,
      api.result(0, "x".repeat(256 * 1024 + 1)),
    );
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe("payload_too_large");
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.status).toBe("running");
    const exact = await api.complete(
      sid,
      "h1",
      job.callback.token,
      api.result(0, "x".repeat(256 * 1024)),
    );
    expect(exact.status).toBe(202);
  });

  it("a job purged after retention answers job_expired to the pull, a reservation and its runner", async () => {
    const sid = api.uniqueId("purge");
    await api.createSession(sid);
    const job = await api.reserve(sid, "h1");
    await api.complete(sid, "h1", job.callback.token, api.result(0, "x"));
    // Age the result past JOB_RETENTION_MS, then let the object reload and its alarm purge.
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE jobs SET completed_at = ?", Date.now() - 86_400_001);
    });
    await abortAllDurableObjects();
    await api.call("GET", `/v1/sessions/${sid}`);
    // The reloaded object arms its alarm for the overdue purge; run it now if it has not fired yet.
    await api.fireAlarm(sid);
    const pulled = await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`);
    expect(pulled.status).toBe(410);
    expect(pulled.body.code).toBe("job_expired");
    const reserved = await api.call("POST", `/v1/sessions/${sid}/exec-jobs`, {
      body: { handle: "h1", command: "run h1" },
    });
    expect(reserved.body.code).toBe("job_expired");
    expect((await api.complete(sid, "h1", job.callback.token, api.result(0, "x"))).body.code).toBe(
      "job_expired",
    );
  });

  it("an unknown job is not_found", async () => {
    const sid = api.uniqueId("unknown-job");
    await api.createSession(sid);
    const answer = await api.call("GET", `/v1/sessions/${sid}/exec-jobs/nope`);
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe("not_found");
  });
});
