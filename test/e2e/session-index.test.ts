// The session index under the real wrangler dev: local D1 on SQLite under --persist-to, its schema
// made by the Worker on first use (no migration step before `npm start`), and kept across a restart.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { api, devVar } from "../../scripts/lib/local-stack";
import { useWranglerDev } from "../support/local-dev";

const OPERATOR = devVar("OPERATOR_TOKENS");

describe("the session index under the real wrangler dev", () => {
  const local = useWranglerDev("e2e-index");

  const listed = async (query: string) => {
    const answer = await api(
      local.dev.base,
      "GET",
      `/v1/ops/sessions?${query}`,
      undefined,
      OPERATOR,
    );
    expect(answer.status).toBe(200);
    return answer.body as { sessions: Array<{ id: string; status: string }>; counts: object };
  };

  async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const value = await read();
      if (accept(value) || Date.now() > deadline) return value;
      await sleep(100);
    }
  }

  it("a fresh local D1 answers an empty list, then lists a suspended session, also after a restart", async () => {
    expect(await listed("")).toEqual({
      sessions: [],
      next: null,
      counts: { suspended: 0, resuming: 0, failed: 0, no_target: 0, overdue: 0 },
    });

    const sid = `e2e-index-${Date.now()}`;
    await api(local.dev.base, "POST", "/v1/sessions", { id: sid });
    await api(local.dev.base, "POST", `/v1/sessions/${sid}/exec-jobs`, {
      handle: "h",
      command: "x",
    });
    const run = await api(local.dev.base, "POST", `/v1/sessions/${sid}/runs`, {});
    await api(local.dev.base, "POST", `/v1/sessions/${sid}/runs/${run.body.run_id}/suspend`, {
      waiting_for: ["h"],
    });
    const seen = await until(
      () => listed("status=suspended&tenant=default"),
      (page) => page.sessions.length === 1,
    );
    expect(seen.sessions).toMatchObject([{ id: sid, status: "suspended" }]);

    await local.restart();
    expect((await listed("status=suspended")).sessions).toMatchObject([{ id: sid }]);
  });
});
