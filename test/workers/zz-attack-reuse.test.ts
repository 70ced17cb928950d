import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { call, complete, createSession, reserve, result, stubOf, uniqueId } from "../support/api";

const DAY = 24 * 60 * 60 * 1000;
const until = (check: () => Promise<void>, timeout = 10_000) =>
  vi.waitFor(check, { timeout, interval: 100 });

describe("attack: handle reused after purge + tombstone expiry", () => {
  it("the new job's completion is accepted while the old envelope is still unacked", async () => {
    const sid = uniqueId("reuse");
    await createSession(sid);
    const first = await reserve(sid, "h1", "echo same");
    expect((await complete(sid, "h1", first.callback.token, result(0, "x"))).status).toBe(202);
    // Age the result past retention, restart so the object re-reads its due times; the alarm purges.
    await runInDurableObject(stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE jobs SET completed_at = ?", Date.now() - DAY - 1000);
    });
    await abortAllDurableObjects();
    await until(async () => {
      expect((await call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).status).toBe(410);
    });
    // Age the tombstone past its own retention period: the alarm removes it, the handle is unknown.
    await runInDurableObject(stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE purged SET purged_at = ?", Date.now() - DAY - 1000);
    });
    await abortAllDurableObjects();
    await until(async () => {
      expect((await call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).status).toBe(404);
    });
    const second = await reserve(sid, "h1", "echo same");
    expect(second.job.status).toBe("running");
    const inboxRows = await runInDurableObject(stubOf(sid), (_, state) =>
      state.storage.sql.exec("SELECT id, state FROM inbox").toArray(),
    );
    console.log("inbox before second completion", JSON.stringify(inboxRows));
    const answer = await complete(sid, "h1", second.callback.token, result(0, "x"));
    console.log("second completion", answer.status, JSON.stringify(answer.body));
    expect(answer.status).toBe(202);
  }, 30_000);
});
