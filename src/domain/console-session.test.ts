import { describe, expect, it } from "vitest";
import {
  CONSOLE_IDLE_TIMEOUT_MS,
  CONSOLE_SESSION_MAX_MS,
  CONSOLE_TOUCH_EVERY_MS,
  judgeSession,
  SIGN_IN_FAILURES_PER_WINDOW,
  SIGN_IN_GLOBAL_FAILURES_PER_WINDOW,
  SIGN_IN_WINDOW_MS,
  signInAllowed,
  signInBudgets,
  throttleKey,
} from "./console-session";

const T0 = 1_700_000_000_000;

describe("a console session", () => {
  it("is live until idle for the timeout, and records activity at most once a minute", () => {
    const row = { createdAt: T0, lastSeenAt: T0 };
    expect(judgeSession(row, T0 + 1_000, true)).toEqual({ state: "live", touch: false });
    expect(judgeSession(row, T0 + CONSOLE_TOUCH_EVERY_MS, true)).toEqual({
      state: "live",
      touch: true,
    });
    expect(judgeSession(row, T0 + CONSOLE_TOUCH_EVERY_MS, false)).toEqual({
      state: "live",
      touch: false,
    });
    expect(judgeSession(row, T0 + CONSOLE_IDLE_TIMEOUT_MS, true)).toEqual({
      state: "ended",
      why: "idle",
    });
  });

  it("ends at its lifetime however active it is", () => {
    const now = T0 + CONSOLE_SESSION_MAX_MS;
    expect(judgeSession({ createdAt: T0, lastSeenAt: now - 1 }, now, true)).toEqual({
      state: "ended",
      why: "lifetime",
    });
  });
});

describe("sign-in throttling", () => {
  it("checks the first attempts of a window and holds the rest until the window ends", () => {
    const window = (attempts: number) => ({ windowStart: T0, attempts });
    expect(signInAllowed(window(SIGN_IN_FAILURES_PER_WINDOW), T0 + 5_000)).toEqual({
      allowed: true,
    });
    expect(signInAllowed(window(SIGN_IN_FAILURES_PER_WINDOW + 1), T0 + 5_000)).toEqual({
      allowed: false,
      retryAfterMs: SIGN_IN_WINDOW_MS - 5_000,
    });
  });

  it("counts an IPv4 client by its address, an IPv6 client by its /64, and no address as one client", () => {
    expect(throttleKey("203.0.113.7")).toBe("203.0.113.7");
    expect(throttleKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(throttleKey("2001:db8:1:2:bbbb::9")).toBe("2001:db8:1:2::/64");
    expect(throttleKey("2001:DB8::1")).toBe("2001:db8:0:0::/64");
    expect(throttleKey("2001:0db8:0000:0000:ffff::2")).toBe("2001:db8:0:0::/64");
    expect(throttleKey(null)).toBe("unknown");
  });

  it("counts a known browser alone, and every other client by address and in the count all share", () => {
    expect(signInBudgets("n0nce", "203.0.113.7")).toEqual([
      { key: "device:n0nce", limit: SIGN_IN_FAILURES_PER_WINDOW, shared: false },
    ]);
    const shared = { key: "all", limit: SIGN_IN_GLOBAL_FAILURES_PER_WINDOW, shared: true };
    expect(signInBudgets(null, "203.0.113.7")).toEqual([
      { key: "ip:203.0.113.7", limit: SIGN_IN_FAILURES_PER_WINDOW, shared: false },
      shared,
    ]);
    // A forged address cannot name the shared count or a device's.
    expect(signInBudgets(null, "all")[0]?.key).toBe("ip:all");
    expect(signInBudgets(null, "device:n0nce")[0]?.key).not.toBe("device:n0nce");
  });
});
