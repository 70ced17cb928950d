import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, migrate } from "../../src/session-object/migrations";
import * as api from "../support/api";

const LIMITS = ["memory_limit", "pids_limit", "output_limit", "disk_limit"] as const;

/** Rebuilds the session's database as the code before migration 7 (the limits' CHECK) left it. */
async function storeAsBeforeLimits(sid: string): Promise<void> {
  await runInDurableObject(api.stubOf(sid), (_, state) => {
    const sql = state.storage.sql;
    const session = sql.exec("SELECT * FROM session").one();
    const jobs = sql.exec("SELECT * FROM jobs").toArray();
    const tables = sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
      )
      .toArray();
    for (const { name } of tables) sql.exec(`DROP TABLE ${name}`);
    migrate(
      sql,
      MIGRATIONS.filter((migration) => migration.id < 7),
    );
    // Only the columns the old table had: later migrations added some.
    const insert = (table: string, row: Record<string, SqlStorageValue>) => {
      const old = new Set(
        sql
          .exec<{ name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
          .toArray()
          .map((column) => column.name),
      );
      const names = Object.keys(row).filter((name) => old.has(name));
      sql.exec(
        `INSERT INTO ${table} (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`,
        ...names.map((name) => row[name] ?? null),
      );
    };
    insert("session", session);
    for (const job of jobs) insert("jobs", job);
  });
  await abortAllDurableObjects();
}

describe("a completion ended by one of the runner's limits", () => {
  it.each(LIMITS)("a killed completion ended by %s is stored and pulled as sent", async (limit) => {
    const sid = api.uniqueId(`limit-${limit}`);
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    const sent = { status: "killed", exit_code: null, output: "partial", ended_by: limit };
    expect((await api.complete(sid, "h1", token, sent)).status).toBe(202);
    const pulled = await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`);
    expect(pulled).toMatchObject({
      status: 200,
      body: { status: "killed", exit_code: null, output: "partial", ended_by: limit },
    });
  });

  it("a database from before the limits keeps its jobs and takes a limit's ended_by after the upgrade", async () => {
    const sid = api.uniqueId("limit-upgrade");
    await api.createSession(sid);
    const running = (await api.reserve(sid, "running")).callback.token;
    const done = (await api.reserve(sid, "done")).callback.token;
    expect((await api.complete(sid, "done", done, api.result(0, "kept"))).status).toBe(202);
    await storeAsBeforeLimits(sid);

    const sent = { status: "killed", exit_code: null, output: "", ended_by: "pids_limit" };
    expect((await api.complete(sid, "running", running, sent)).status).toBe(202);
    const kept = await api.call("GET", `/v1/sessions/${sid}/exec-jobs/done`);
    expect(kept.body).toMatchObject({ status: "completed", output: "kept", ended_by: null });
    const limited = await api.call("GET", `/v1/sessions/${sid}/exec-jobs/running`);
    expect(limited.body).toMatchObject({ status: "killed", ended_by: "pids_limit" });
  });
});
