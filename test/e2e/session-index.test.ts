// The session index under the real wrangler dev: local D1 on SQLite under --persist-to, its schema
// made by the Worker on first use (no migration step before `npm start`), and kept across a restart.
import { setTimeout as sleep } from "node:timers/promises";
import { ExecInboxOperatorClient } from "@exec-inbox/client/operator";
import { describe, expect, it } from "vitest";
import { useWranglerDev } from "../support/local-dev";
import { agentClient, devVar } from "../support/local-stack";

const OPERATOR = devVar("OPERATOR_TOKENS");

describe("the session index under the real wrangler dev", () => {
  const local = useWranglerDev("e2e-index");

  const listed = (query: Parameters<ExecInboxOperatorClient["listSessions"]>[0] = {}) =>
    new ExecInboxOperatorClient({ baseUrl: local.dev.base, token: OPERATOR }).listSessions(query);

  async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const value = await read();
      if (accept(value) || Date.now() > deadline) return value;
      await sleep(100);
    }
  }

  it("a fresh local D1 answers an empty list, then lists a suspended session, also after a restart", async () => {
    expect(await listed()).toEqual({
      sessions: [],
      next: null,
      counts: { suspended: 0, resuming: 0, failed: 0, no_target: 0, overdue: 0 },
    });

    const sid = `e2e-index-${Date.now()}`;
    const inbox = agentClient(local.dev.base);
    await inbox.createSession({ id: sid });
    await inbox.reserveJob(sid, { handle: "h", command: "x" });
    const run = await inbox.registerRun(sid);
    await inbox.suspend(sid, run.run_id, { waiting_for: ["h"] });
    const seen = await until(
      () => listed({ status: "suspended", tenant: "default" }),
      (page) => page.sessions.length === 1,
    );
    expect(seen.sessions).toMatchObject([{ id: sid, status: "suspended" }]);

    await local.restart();
    expect((await listed({ status: "suspended" })).sessions).toMatchObject([{ id: sid }]);
  });
});
