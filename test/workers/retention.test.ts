import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

const DAY = 24 * 60 * 60 * 1000;
const pull = (sid: string) => api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`);

/** Ages the rows a SQL statement names by a retention period and restarts the object: its alarm purges. */
async function ageAndRestart(sid: string, statement: string): Promise<void> {
  await runInDurableObject(api.stubOf(sid), (_, state) => {
    state.storage.sql.exec(statement, Date.now() - DAY - 1000);
  });
  await abortAllDurableObjects();
}

/** Completes h1, then lets retention purge the job and, one period later, its tombstone. */
async function reservedAgainAfterRetention(sid: string, ackFirst: boolean) {
  await api.createSession(sid);
  const first = await api.reserve(sid, "h1", "echo same");
  expect((await api.complete(sid, "h1", first.callback.token, api.result(0, "x"))).status).toBe(
    202,
  );
  if (ackFirst) {
    const ids = (await api.claim(sid)).body.claims.map((entry: any) => entry.envelope.id);
    expect(
      (await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, { body: { ids } })).status,
    ).toBe(200);
  }
  await ageAndRestart(sid, "UPDATE jobs SET completed_at = ?");
  await api.until(async () => expect((await pull(sid)).body.code).toBe("job_expired"));
  await ageAndRestart(sid, "UPDATE purged SET purged_at = ?");
  await api.until(async () => expect((await pull(sid)).status).toBe(404));
  // The old token stays fenced although nothing of its job is left.
  const late = await api.complete(sid, "h1", first.callback.token, api.result(0, "x"));
  expect([late.status, late.body.code]).toEqual([410, "job_expired"]);
  const second = await api.reserve(sid, "h1", "echo same");
  expect(second.job.status).toBe("running");
  return second.callback.token;
}

describe("retention and reused handles", () => {
  for (const ackFirst of [false, true]) {
    it(`a handle reserved again after its purge is a new job whose identical result is accepted (old envelope ${ackFirst ? "acked" : "unacked"})`, async () => {
      const sid = api.uniqueId("reuse");
      const token = await reservedAgainAfterRetention(sid, ackFirst);
      const again = await api.complete(sid, "h1", token, api.result(0, "x"));
      expect(again.body).toMatchObject({ outcome: "accepted" });
      const envelopes = (await api.claim(sid, { max: 128 })).body.claims.map(
        (entry: any) => entry.envelope,
      );
      const forHandle = envelopes.filter((envelope: any) => envelope.correlation_id === "h1");
      expect(forHandle.length).toBe(ackFirst ? 1 : 2);
      expect(new Set(forHandle.map((envelope: any) => envelope.id)).size).toBe(forHandle.length);
    }, 30_000);
  }
});
