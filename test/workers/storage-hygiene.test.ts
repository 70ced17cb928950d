// A request that needs no state must leave none: the health check and every request for a session
// that does not exist keep the object's storage exactly as a never-asked object's.
import { listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ID_PATTERN } from "../../src/domain/schemas";
import { HEALTH_OBJECT_NAME, TENANT_PATTERN } from "../../src/domain/tenants";
import { call, stubOf, uniqueId } from "../support/api";

/** What a client could find of an object's storage: its tables, their rows, its alarm, its size. */
const footprint = (name: string) =>
  runInDurableObject(stubOf(name), async (_instance, state) => {
    const tables = state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .toArray()
      .map((row) => row.name);
    return {
      tables,
      alarm: await state.storage.getAlarm(),
      databaseBytes: state.storage.sql.databaseSize,
    };
  });

const UNKNOWN_SESSION_REQUESTS: [string, (sid: string) => string, unknown?][] = [
  ["GET", (sid) => `/v1/sessions/${sid}`],
  ["DELETE", (sid) => `/v1/sessions/${sid}`],
  ["GET", (sid) => `/v1/sessions/${sid}/messages`],
  ["POST", (sid) => `/v1/sessions/${sid}/messages`, { role: "user", content: "hi" }],
  ["GET", (sid) => `/v1/sessions/${sid}/exec-jobs`],
  ["GET", (sid) => `/v1/sessions/${sid}/exec-jobs/h1`],
  ["POST", (sid) => `/v1/sessions/${sid}/exec-jobs`, { handle: "h1", command: "ls" }],
  ["GET", (sid) => `/v1/sessions/${sid}/inbox`],
  ["POST", (sid) => `/v1/sessions/${sid}/inbox/claim`, {}],
  ["POST", (sid) => `/v1/sessions/${sid}/inbox/ack`, { ids: ["x"] }],
  ["POST", (sid) => `/v1/sessions/${sid}/runs`, {}],
  ["POST", (sid) => `/v1/sessions/${sid}/runs/r1/finish`],
  ["POST", (sid) => `/v1/sessions/${sid}/runs/r1/suspend`, { waiting_for: ["h1"] }],
  ["GET", (sid) => `/v1/sessions/${sid}/runs/r1/notifications`],
];

/** The objects of the session namespace that exist now, by id. */
const objectIds = async () =>
  new Set((await listDurableObjectIds(env.SESSIONS)).map((id) => id.toString()));

describe("drains on sessions that do not exist start no object", () => {
  it("DELETE and cancel on 50 unknown ids answer 404 and add no object to the namespace", async () => {
    // The attack: drains are never rate limited, and each unknown id started an object that kept
    // a database file (1,000 drains made 1,414 under wrangler dev).
    const before = await objectIds();
    const ids = Array.from({ length: 50 }, (_, n) => uniqueId(`drain-${n}`));
    const answers = await Promise.all(
      ids.flatMap((sid) => [
        call("DELETE", `/v1/sessions/${sid}`),
        call("POST", `/v1/sessions/${sid}/exec-jobs/h1/cancel`),
      ]),
    );
    expect(answers.map((answer) => [answer.status, answer.body.code])).toEqual(
      answers.map(() => [404, "not_found"]),
    );
    const added = [...(await objectIds())].filter((id) => !before.has(id));
    const asked = new Set(ids.map((sid) => env.SESSIONS.idFromName(sid).toString()));
    expect(added.filter((id) => asked.has(id))).toEqual([]);
  }, 30_000);

  it("DELETE and cancel on a session that exists still reach its object", async () => {
    const sid = uniqueId("drain-live");
    expect((await call("POST", "/v1/sessions", { body: { id: sid } })).status).toBe(201);
    const reserved = await call("POST", `/v1/sessions/${sid}/exec-jobs`, {
      body: { handle: "h1", command: "sleep 9" },
    });
    expect(reserved.status).toBe(201);
    const cancelled = await call("POST", `/v1/sessions/${sid}/exec-jobs/h1/cancel`);
    expect([cancelled.status, cancelled.body]).toEqual([202, { cancel_requested: true }]);
    expect((await call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect((await call("DELETE", `/v1/sessions/${sid}`)).status).toBe(404);
  });
});

describe("requests that need no state leave no storage", () => {
  it("an object nobody wrote to has no table of ours, no alarm and a fixed size (the baseline)", async () => {
    const baseline = await footprint(uniqueId("never-asked"));
    expect(baseline.tables.filter((table) => !table.startsWith("_cf_"))).toEqual([]);
    expect(baseline.alarm).toBeNull();
  });

  it.each(UNKNOWN_SESSION_REQUESTS)(
    "%s on an unknown session answers 404 and leaves its object as never asked",
    async (method, path, body) => {
      const baseline = await footprint(uniqueId("never-asked"));
      const sid = uniqueId("unknown");
      for (let round = 0; round < 2; round += 1) {
        const answer = await call(method, path(sid), { body });
        expect(answer.status).toBe(404);
        expect(answer.body.code).toBe("not_found");
      }
      expect(await footprint(sid)).toEqual(baseline);
    },
  );

  it("GET /healthz/object leaves the object it pings as never asked", async () => {
    const baseline = await footprint(uniqueId("never-asked"));
    for (let round = 0; round < 3; round += 1) {
      expect((await call("GET", "/healthz/object", { token: null })).body).toEqual({ ok: true });
    }
    expect(await footprint(HEALTH_OBJECT_NAME)).toEqual(baseline);
  });

  it("no session, whatever its id, lives in the object the health check pings", async () => {
    const baseline = await footprint(uniqueId("never-asked"));
    for (const id of ["_healthz", "_probe", "healthz", "_probe:healthz"]) {
      expect((await call("POST", "/v1/sessions", { body: { id } })).status).toBe(201);
    }
    expect((await call("GET", "/healthz/object", { token: null })).status).toBe(200);
    expect(await footprint(HEALTH_OBJECT_NAME)).toEqual(baseline);
    // By construction: the name is no default-tenant id and its prefix is no tenant.
    expect(ID_PATTERN.test(HEALTH_OBJECT_NAME)).toBe(false);
    expect(TENANT_PATTERN.test(HEALTH_OBJECT_NAME.split("/")[0] ?? "")).toBe(false);
  });

  it("a created session does leave storage, so the check above can see it", async () => {
    const baseline = await footprint(uniqueId("never-asked"));
    const sid = uniqueId("created");
    expect((await call("POST", "/v1/sessions", { body: { id: sid } })).status).toBe(201);
    const created = await footprint(sid);
    expect(created.tables).toContain("_migrations");
    expect(created.databaseBytes).toBeGreaterThan(baseline.databaseBytes);
  });

  it("a deleted session leaves its object as never asked", async () => {
    const baseline = await footprint(uniqueId("never-asked"));
    const sid = uniqueId("deleted");
    expect((await call("POST", "/v1/sessions", { body: { id: sid } })).status).toBe(201);
    expect((await call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect(await footprint(sid)).toEqual(baseline);
  });
});
