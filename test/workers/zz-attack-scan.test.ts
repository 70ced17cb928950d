import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, claim, complete, createSession, reserve, result, stubOf, uniqueId } from "../support/api";

const stats = async (sid: string) => (await call("GET", `/v1/sessions/${sid}/stats`)).body;

describe("attack: claim scans acked history", () => {
  it("a claim reads rows in proportion to the acked history", async () => {
    const sid = uniqueId("scan");
    await createSession(sid);
    await runInDurableObject(stubOf(sid), (_, state) => {
      const sql = state.storage.sql;
      const now = Date.now();
      for (let g = 1; g <= 5000; g += 1)
        sql.exec(
          "INSERT INTO inbox (id, generation, state, lease_expires_at, acked_at, envelope) VALUES (?, ?, 'acked', NULL, ?, ?)",
          `old-${g}`, g, now, JSON.stringify({ id: `old-${g}`, pad: "x".repeat(8000) }));
      sql.exec("UPDATE session SET generation = 5000");
      for (const q of [
        "SELECT id FROM inbox WHERE (state = 'pending' OR (state = 'claimed' AND lease_expires_at <= 1)) ORDER BY generation LIMIT 16",
        "SELECT COUNT(*) FROM jobs",
      ]) console.log(q.slice(0, 40), JSON.stringify(sql.exec(`EXPLAIN QUERY PLAN ${q}`).toArray()));
    });
    await abortAllDurableObjects();
    const { callback } = await reserve(sid, "h1");
    await complete(sid, "h1", callback.token, result(0, "x"));
    const before = (await stats(sid)).rows_read;
    const t0 = Date.now();
    const claimed = await claim(sid);
    const t1 = Date.now();
    const after = (await stats(sid)).rows_read;
    console.log("claim got", claimed.body.claims.length, "rows_read", after - before, "ms", t1 - t0);
    expect(after - before).toBeLessThan(100);
  }, 60_000);
});
