// Liveness on the real wrangler dev, its restart and its idle closes (contract §9 "never early,
// never never"): the test plays a runner that heartbeats every third of a 5 s timeout, retrying
// failed heartbeats, across a restart that takes longer than the timeout; a silent job beside it
// is lost after the restart; a silent job in an object closed when idle is lost on time.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { useWranglerDev } from "../support/local-dev";
import { api, devVar, waitFor } from "../support/local-stack";

const TIMEOUT_MS = 5_000;

describe("liveness under the real wrangler dev", () => {
  const local = useWranglerDev("liveness");
  const loops: Array<{ stop: () => void }> = [];
  afterAll(() => {
    for (const loop of loops) loop.stop();
  });

  const agent = (method: string, path: string, body?: unknown) =>
    api(local.dev.base, method, path, body);
  const reserve = async (sid: string, handle: string, timeoutMs: number) => {
    const reserved = await agent("POST", `/v1/sessions/${sid}/exec-jobs`, {
      handle,
      command: `run ${handle}`,
      heartbeat_timeout_ms: timeoutMs,
    });
    expect(reserved.status).toBe(201);
    return reserved.body.callback as { heartbeat_url: string; token: string };
  };
  const job = async (sid: string, handle: string) =>
    (await agent("GET", `/v1/sessions/${sid}/exec-jobs/${handle}`)).body;

  /** A runner's heartbeat loop: every third of the timeout, failed ones retried after 250 ms. */
  function heartbeating(callback: { heartbeat_url: string; token: string }) {
    let running = true;
    let answered = 0;
    let failed = 0;
    const url = () => callback.heartbeat_url.replace(/^http:\/\/[^/]+/, local.dev.base);
    void (async () => {
      while (running) {
        let ok = false;
        try {
          const response = await fetch(url(), {
            method: "POST",
            headers: { authorization: `Bearer ${callback.token}` },
            signal: AbortSignal.timeout(2_000),
          });
          ok = response.status === 200;
          if (response.status === 409 || response.status === 410) running = false;
        } catch {
          ok = false;
        }
        if (ok) answered += 1;
        else failed += 1;
        await sleep(ok ? TIMEOUT_MS / 3 : 250);
      }
    })();
    const loop = {
      stop: () => {
        running = false;
      },
      counts: () => ({ answered, failed }),
    };
    loops.push(loop);
    return loop;
  }

  it("a heartbeating job survives a restart longer than its timeout; a silent one beside it is lost after it, once; the first is lost when it falls silent", async () => {
    const sid = `liveness-restart-${Date.now()}`;
    expect((await agent("POST", "/v1/sessions", { id: sid })).status).toBe(201);
    const alive = heartbeating(await reserve(sid, "alive", TIMEOUT_MS));
    const silentReservedAt = Date.now();
    await reserve(sid, "silent", TIMEOUT_MS);
    await sleep(TIMEOUT_MS / 2);

    const down = Date.now();
    await local.restart(TIMEOUT_MS);
    const back = Date.now();
    // The heartbeats met the downtime, and it was longer than the timeout.
    expect(alive.counts().failed).toBeGreaterThan(0);
    expect(back - down).toBeGreaterThan(TIMEOUT_MS);

    // The silent job: its deadline passed during the downtime or after it; it is lost once, and
    // not before a whole timeout of silence after its reservation.
    const lost = await waitFor(async () => {
      const silent = await job(sid, "silent");
      return silent.status === "lost" ? silent : undefined;
    }, 30_000);
    expect(lost.ended_by).toBe("heartbeat_timeout");
    expect(Date.parse(lost.completed_at) - silentReservedAt).toBeGreaterThanOrEqual(TIMEOUT_MS);
    // The heartbeating one was never declared lost across the restart: the silent one beside it
    // got the same grace, and is lost a whole timeout after the service came back.
    expect((await job(sid, "alive")).status).toBe("running");
    expect(Date.parse(lost.completed_at) - back).toBeGreaterThanOrEqual(TIMEOUT_MS - 1_000);

    // Fallen silent for good: lost within two timeouts of its last heartbeat.
    alive.stop();
    const stoppedAt = Date.now();
    const gone = await waitFor(async () => {
      const view = await job(sid, "alive");
      return view.status === "lost" ? view : undefined;
    }, 30_000);
    const lostAfter = Date.parse(gone.completed_at) - Date.parse(gone.last_heartbeat_at);
    expect(lostAfter).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(Date.parse(gone.completed_at) - stoppedAt).toBeLessThanOrEqual(2 * TIMEOUT_MS + 2_000);
    const events = await fetch(`${local.dev.base}/v1/ops/sessions/default/${sid}/events`, {
      headers: { authorization: `Bearer ${devVar("OPERATOR_TOKENS").split(",")[0]}` },
    });
    expect(events.status).toBe(200);
    const trail = ((await events.json()) as { events: Array<Record<string, unknown>> }).events;
    const losses = trail.filter((event) => event.ended_by === "heartbeat_timeout");
    expect(losses.map((event) => event.handle).sort()).toEqual(["alive", "silent"]);
  }, 90_000);
});
