import { describe, expect, it } from "vitest";
import { heartbeatTimeoutFor, readConfig } from "./config";

describe("the heartbeat timeout a reservation gets when it names none", () => {
  it("is the tenant's own, else HEARTBEAT_TIMEOUT_MS, and a tenant's null turns the global one off", () => {
    const config = readConfig({
      HEARTBEAT_TIMEOUT_MS: "60000",
      TENANT_SETTINGS: JSON.stringify({
        acme: { heartbeat_timeout_ms: 30_000 },
        legacy: { heartbeat_timeout_ms: null },
      }),
    });
    expect(config.misconfigured).toBeNull();
    expect(heartbeatTimeoutFor(config, "default")).toBe(60_000);
    expect(heartbeatTimeoutFor(config, "acme")).toBe(30_000);
    expect(heartbeatTimeoutFor(config, "legacy")).toBeNull();
    expect(heartbeatTimeoutFor(readConfig({}), "default")).toBeNull();
  });

  it("a HEARTBEAT_TIMEOUT_MS outside the contract's range refuses to serve, naming the setting", () => {
    for (const bad of ["4999", "86400001", "1.5", "soon"]) {
      expect(readConfig({ HEARTBEAT_TIMEOUT_MS: bad }).misconfigured).toContain(
        "HEARTBEAT_TIMEOUT_MS",
      );
    }
    expect(
      readConfig({ TENANT_SETTINGS: '{"acme":{"heartbeat_timeout_ms":10}}' }).misconfigured,
    ).toContain("TENANT_SETTINGS");
  });
});
