import { describe, expect, it } from "vitest";
import { readConfig } from "./config";
import { parseAgentTokens, sessionObjectName } from "./tenants";

describe("AGENT_TOKENS entries", () => {
  it("a bare token is the default tenant's and `tenant:token` names a tenant", () => {
    expect(parseAgentTokens(["plain", "acme:tok-a", "acme:tok-b", "x-1:t:with:colons"])).toEqual({
      ok: true,
      tokens: [
        { tenant: "default", token: "plain" },
        { tenant: "acme", token: "tok-a" },
        { tenant: "acme", token: "tok-b" },
        { tenant: "x-1", token: "t:with:colons" },
      ],
    });
  });

  it("a malformed entry refuses the whole setting, naming its position but never the token", () => {
    for (const [entries, reason] of [
      [["ok", "Acme:secret-token"], "entry 2: a tenant name"],
      [[":secret-token"], "entry 1: a tenant name"],
      [[`${"a".repeat(65)}:secret-token`], "entry 1: a tenant name"],
      [["acme:"], "entry 1: the token is empty"],
      [["acme:secret-token", "globex:secret-token"], "entry 2: the same token"],
    ] as const) {
      const parsed = parseAgentTokens(entries);
      expect(parsed.ok).toBe(false);
      if (parsed.ok) continue;
      expect(parsed.reason).toContain(reason);
      expect(parsed.reason).not.toContain("secret-token");
    }
    const config = readConfig({ AGENT_TOKENS: "good, Bad:x" });
    expect(config.agentTokens).toEqual([]);
    expect(config.misconfigured).toContain("AGENT_TOKENS entry 2");
  });

  it("object names keep the default tenant's ids bare and never collide across tenants", () => {
    expect(sessionObjectName("default", "s1")).toBe("s1");
    expect(sessionObjectName("acme", "s1")).toBe("acme/s1");
    // A session id cannot contain `/`, so no default-tenant id can spell another tenant's name.
    expect(sessionObjectName("default", "acme:s1")).not.toBe(sessionObjectName("acme", "s1"));
  });
});
