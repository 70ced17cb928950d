import { describe, expect, it } from "vitest";
import { ok, session, T0, withJobs } from "../../test/support/domain";
import { quotasFor, readConfig } from "./config";
import { reserveJob } from "./jobs";
import { DEFAULT_QUOTAS, type Quotas } from "./quotas";
import { appendMessage } from "./session";

const small: Quotas = { ...DEFAULT_QUOTAS, runningJobs: 2, messageBytes: 110 };

describe("the running-jobs quota", () => {
  const reserve = (state: ReturnType<typeof session>, handle: string, running: number) =>
    reserveJob(
      state,
      {
        handle,
        command: `run ${handle}`,
        callbackToken: `tok-${handle}`,
        quota: { running: () => running, quotas: small },
      },
      T0,
    );

  it("refuses a new reservation at the quota with quota_exceeded naming it, and changes nothing", () => {
    const refused = reserve(withJobs(session(), ["a", "b"]), "c", 2);
    expect(refused).toMatchObject({ ok: false, code: "quota_exceeded" });
    if (refused.ok) return;
    expect(refused.detail).toContain("(running_jobs)");
  });

  it("answers the same reservation again at the quota without counting", () => {
    const full = withJobs(session(), ["a", "b"]);
    const again = reserveJob(
      full,
      {
        handle: "a",
        command: "run a",
        callbackToken: ok(reserve(session(), "a", 0)).value.job.callbackToken,
        quota: {
          running: () => {
            throw new Error("counted");
          },
          quotas: small,
        },
      },
      T0,
    );
    expect(again.ok).toBe(true);
  });

  it("takes a new reservation below the quota", () => {
    expect(ok(reserve(withJobs(session(), ["a"]), "b", 1)).value.created).toBe(true);
  });
});

describe("the message-bytes quota", () => {
  it("counts the message's JSON, refuses what would pass the quota, and keeps the count", () => {
    const first = ok(
      appendMessage(session(), { role: "user", content: "x".repeat(20), metadata: {} }, T0, small),
    );
    // {"role":"user","content":"xxxxxxxxxxxxxxxxxxxx","metadata":{}}: 62 bytes; 20 more would pass 110
    expect(first.state?.messageBytes).toBe(62);
    const refused = appendMessage(
      first.state!,
      { role: "user", content: "y".repeat(20), metadata: {} },
      T0,
      small,
    );
    expect(refused).toMatchObject({ ok: false, code: "quota_exceeded" });
    const fits = ok(
      appendMessage(first.state!, { role: "user", content: "", metadata: {} }, T0, small),
    );
    expect(fits.state?.messageBytes).toBe(62 + 42);
  });
});

describe("quota settings", () => {
  it("QUOTA_* set the deployment's, TENANT_SETTINGS a tenant's, and null means no limit", () => {
    const config = readConfig({
      QUOTA_RUNNING_JOBS: "16",
      QUOTA_SESSIONS: "not a number",
      TENANT_SETTINGS: JSON.stringify({ acme: { quotas: { running_jobs: 4, sessions: null } } }),
    });
    expect(config.misconfigured).toBeNull();
    expect(quotasFor(config, "default")).toEqual({ ...DEFAULT_QUOTAS, runningJobs: 16 });
    expect(quotasFor(config, "acme")).toEqual({
      ...DEFAULT_QUOTAS,
      runningJobs: 4,
      sessions: Number.POSITIVE_INFINITY,
    });
  });

  it("an unknown quota or a value that is not a positive integer refuses to serve", () => {
    for (const quotas of [{ runs: 3 }, { running_jobs: 0 }, { message_bytes: 1.5 }]) {
      const config = readConfig({ TENANT_SETTINGS: JSON.stringify({ acme: { quotas } }) });
      expect(config.misconfigured).toContain("TENANT_SETTINGS");
    }
  });
});
