import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

async function sessionWithItems(sid: string, count: number) {
  await api.createSession(sid);
  for (let i = 0; i < count; i += 1) {
    const job = await api.reserve(sid, `h${i}`);
    await api.complete(sid, `h${i}`, job.callback.token, api.result(0, `out ${i}`));
  }
}

describe("the inbox", () => {
  it("claims in generation order up to max, with a lease", async () => {
    const sid = api.uniqueId("claim-order");
    await sessionWithItems(sid, 3);
    const first = await api.claim(sid, { max: 2, lease_ms: 60_000 });
    expect(first.status).toBe(200);
    expect(first.body.claims.map((entry: any) => entry.envelope.generation)).toEqual([1, 2]);
    expect(Date.parse(first.body.claims[0].lease_expires_at)).toBeGreaterThan(Date.now() + 50_000);
    const second = await api.claim(sid, { max: 2 });
    expect(second.body.claims.map((entry: any) => entry.envelope.generation)).toEqual([3]);
    expect(await api.inboxCounts(sid)).toEqual({ pending: 0, claimed: 3, acked: 0, generation: 3 });
  });

  it("an item whose lease expired is claimable again (redelivery)", async () => {
    const sid = api.uniqueId("lease");
    await sessionWithItems(sid, 1);
    const first = await api.claim(sid, { lease_ms: 1000 });
    expect((await api.claim(sid)).body.claims).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await api.view(sid)).inbox).toMatchObject({ pending: 1, claimed: 0 });
    const again = await api.claim(sid);
    expect(again.body.claims.map((entry: any) => entry.envelope.id)).toEqual([
      first.body.claims[0].envelope.id,
    ]);
  });

  it("ack is idempotent and reports unknown ids", async () => {
    const sid = api.uniqueId("ack");
    await sessionWithItems(sid, 2);
    const ids = (await api.claim(sid)).body.claims.map((entry: any) => entry.envelope.id);
    const acked = await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, {
      body: { ids: [ids[0], "env_nope"] },
    });
    expect(acked.status).toBe(200);
    expect(acked.body).toEqual({ acked: [ids[0]], unknown: ["env_nope"] });
    const again = await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, { body: { ids } });
    expect(again.body).toEqual({ acked: ids, unknown: [] });
    expect(await api.inboxCounts(sid)).toMatchObject({
      pending: 0,
      claimed: 0,
      acked: 2,
    });
    // An acked item is never redelivered.
    expect((await api.claim(sid)).body.claims).toEqual([]);
  });

  it("a claim of more than 128 is refused with 422", async () => {
    const sid = api.uniqueId("claim-max");
    await api.createSession(sid);
    for (const body of [
      { max: 129 },
      { max: 0 },
      { lease_ms: 999 },
      { lease_ms: 3_600_001 },
      { max: 1.5 },
    ]) {
      const answer = await api.claim(sid, body);
      expect(answer.status).toBe(422);
      expect(answer.body.code).toBe("invalid_request");
    }
  });

  it("at 1024 unacknowledged items a completion gets 429 inbox_full with Retry-After, and acking makes room", async () => {
    const sid = api.uniqueId("backlog");
    await sessionWithItems(sid, 1);
    const last = await api.reserve(sid, "last");
    // Fill the backlog through storage (the pool is slow at thousands of requests), then reload.
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      const sql = state.storage.sql;
      const row = sql.exec<{ envelope: string }>("SELECT envelope FROM inbox").one();
      for (let generation = 2; generation <= 1024; generation += 1) {
        const envelope = {
          ...JSON.parse(row.envelope),
          id: `env_seeded_${generation}`,
          generation,
        };
        sql.exec(
          "INSERT INTO inbox (id, generation, state, envelope) VALUES (?, ?, 'pending', ?)",
          envelope.id,
          generation,
          JSON.stringify(envelope),
        );
      }
      sql.exec("UPDATE session SET generation = 1024");
    });
    await abortAllDurableObjects();
    const before = await api.view(sid);
    expect(before.inbox).toEqual({ pending: 1024, claimed: 0, generation: 1024 });

    const full = await api.complete(sid, "last", last.callback.token, api.result(0, "x"));
    expect(full.status).toBe(429);
    expect(full.body.code).toBe("inbox_full");
    expect(full.headers.get("retry-after")).toBe("5");
    expect(await api.view(sid)).toEqual(before);
    // The runner holding the result is alive: the refusal counts as its heartbeat (liveness).
    const held = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs/last`)).body;
    expect(held).toMatchObject({ status: "running", last_heartbeat_at: expect.any(String) });

    const claimed = await api.claim(sid, { max: 128 });
    expect(claimed.body.claims).toHaveLength(128);
    await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, {
      body: { ids: [claimed.body.claims[0].envelope.id] },
    });
    const accepted = await api.complete(sid, "last", last.callback.token, api.result(0, "x"));
    expect(accepted.status).toBe(202);
    expect(accepted.body.generation).toBe(1025);
  });
});
