import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, migrate } from "../../src/session-object/migrations";
import { call, complete, createSession, reserve, result, stubOf, uniqueId } from "../support/api";

describe("service routes", () => {
  it("healthz answers without auth", async () => {
    const answer = await call("GET", "/healthz", { token: null });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: true, version: "0.1.0" });
  });

  it("the OpenAPI document describes every route with the request schemas", async () => {
    const answer = await call("GET", "/openapi.json", { token: null });
    expect(answer.status).toBe(200);
    expect(answer.body.openapi).toBe("3.1.0");
    const completion = answer.body.paths["/v1/sessions/{sid}/exec-jobs/{handle}/completion"].post;
    const schema = completion.requestBody.content["application/json"].schema;
    expect(schema.required).toEqual(["status", "exit_code", "output"]);
    expect(schema.properties.status.enum).toEqual(["completed", "failed", "killed", "lost"]);
    expect(Object.keys(answer.body.paths)).toHaveLength(34);
    expect(answer.body.paths["/v1/sessions/{sid}/runner"].put).toBeDefined();
    expect(answer.body.paths["/v1/sessions/{sid}/mcp"].post).toBeDefined();
    expect(answer.body.paths["/v1/ops/sessions/{tenant}/{sid}/redeliver"].post.security).toEqual([
      { operatorToken: [] },
    ]);
  });

  it("a no-op Durable Object call answers without auth", async () => {
    expect((await call("GET", "/healthz/object", { token: null })).body).toEqual({ ok: true });
  });

  it("session stats count the SQLite rows a completion reads and writes", async () => {
    const sid = uniqueId("stats");
    await createSession(sid);
    const job = await reserve(sid, "h1");
    const before = (await call("GET", `/v1/sessions/${sid}/stats`)).body;
    await complete(sid, "h1", job.callback.token, result(0, "x"));
    const after = (await call("GET", `/v1/sessions/${sid}/stats`)).body;
    // The session row, the job row and the inbox row.
    expect(after.rows_written - before.rows_written).toBeGreaterThanOrEqual(3);
    expect(after.database_bytes).toBeGreaterThan(0);
  });

  it("an unknown route is a problem+json 404", async () => {
    const answer = await call("GET", "/v2/nothing");
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe("not_found");
  });

  it("no storage column or callback token leaks into a job or session view", async () => {
    const sid = uniqueId("leak");
    await createSession(sid);
    const job = await reserve(sid, "h1");
    await complete(sid, "h1", job.callback.token, result(0, "x"));
    const pulled = (await call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body;
    expect(Object.keys(pulled).sort()).toEqual(
      [
        "cancel_requested",
        "command",
        "completed_at",
        "ended_by",
        "full_output",
        "heartbeat_timeout_ms",
        "last_heartbeat_at",
        "progress",
        "exit_code",
        "handle",
        "lifetime",
        "output",
        "output_bytes_total",
        "output_bytes_total_known",
        "output_truncated",
        "reserved_at",
        "status",
      ].sort(),
    );
    const texts = [
      JSON.stringify(pulled),
      JSON.stringify((await call("GET", `/v1/sessions/${sid}`)).body),
      JSON.stringify((await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body),
    ];
    for (const text of texts) {
      expect(text).not.toContain(job.callback.token);
      expect(text).not.toMatch(/callback_token|callbackToken|singleton|lease_expires_at":\d/);
    }
  });
});

describe("migrations", () => {
  it("applying the migration list again changes nothing and records each id once", async () => {
    const sid = uniqueId("migrate");
    await createSession(sid);
    await runInDurableObject(stubOf(sid), (_, state) => {
      migrate(state.storage.sql);
      migrate(state.storage.sql);
      const applied = state.storage.sql
        .exec<{ id: number }>("SELECT id FROM _migrations ORDER BY id")
        .toArray();
      expect(applied.map((row) => row.id)).toEqual(MIGRATIONS.map((migration) => migration.id));
      expect(state.storage.sql.exec("SELECT COUNT(*) AS n FROM session").one().n).toBe(1);
    });
  });
});
