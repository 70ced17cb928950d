import { describe, expect, it } from "vitest";
import { readConfig, resumeTargetsFor, runnerUrlAllowlistFor } from "./config";
import { parseAgentTokens, parseTenantSettings, sessionObjectName } from "./tenants";

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
      [["acme: secret-token"], "entry 1: the token contains whitespace"],
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

describe("TENANT_SETTINGS", () => {
  it("a tenant's own resume targets replace the globals field by field", () => {
    const config = readConfig({
      RESUME_URL_ALLOWLIST: "https://shared.example",
      RESUME_WEBHOOK_URL: "https://shared.example/resume",
      RESUME_BINDING_ALLOWLIST: "SHARED_AGENT",
      TENANT_SETTINGS: JSON.stringify({
        acme: {
          resume_url_allowlist: ["https://hooks.acme.example"],
          resume_binding_allowlist: ["ACME_AGENT"],
        },
        globex: { resume_webhook_url: "https://globex.example/resume" },
      }),
    });
    expect(config.misconfigured).toBeNull();
    // RESUME_WEBHOOK_URL is the default tenant's host: a named tenant never falls back to it.
    expect(resumeTargetsFor(config, "acme")).toEqual({
      resumeSigningSecret: null,
      resumeUrlAllowlist: ["https://hooks.acme.example"],
      resumeWebhookUrl: null,
      resumeBindingAllowlist: ["ACME_AGENT"],
    });
    expect(resumeTargetsFor(config, "initech")).toEqual({
      resumeSigningSecret: null,
      resumeUrlAllowlist: ["https://shared.example"],
      resumeWebhookUrl: null,
      resumeBindingAllowlist: ["SHARED_AGENT"],
    });
    expect(resumeTargetsFor(config, "default").resumeWebhookUrl).toBe(
      "https://shared.example/resume",
    );
    expect(resumeTargetsFor(config, "globex")).toEqual({
      resumeSigningSecret: null,
      resumeUrlAllowlist: ["https://shared.example"],
      resumeWebhookUrl: "https://globex.example/resume",
      resumeBindingAllowlist: ["SHARED_AGENT"],
    });
    expect(resumeTargetsFor(config, "default").resumeUrlAllowlist).toEqual([
      "https://shared.example",
    ]);
  });

  it("a [vars] table is accepted as well as JSON text", () => {
    expect(parseTenantSettings({ acme: { resume_url_allowlist: [] } })).toEqual({
      ok: true,
      settings: { acme: { resumeUrlAllowlist: [] } },
    });
    expect(parseTenantSettings("")).toEqual({ ok: true, settings: {} });
  });

  it("malformed settings refuse to serve rather than fall back to the globals", () => {
    for (const raw of [
      "{not json",
      '{"Acme": {}}',
      '{"acme": {"resume_webhook_url": "ftp://x"}}',
      '{"acme": {"allowlist": []}}',
      "[]",
    ]) {
      const config = readConfig({ TENANT_SETTINGS: raw });
      expect([raw, config.misconfigured]).toEqual([
        raw,
        expect.stringContaining("TENANT_SETTINGS"),
      ]);
    }
  });

  it("a RESUME_WEBHOOK_URL that is no http(s) URL refuses to serve, as a tenant's own one does", () => {
    for (const raw of ["not a url", "ftp://hooks.example/default", "hooks.example/default"]) {
      const config = readConfig({ AGENT_TOKENS: "tok", RESUME_WEBHOOK_URL: raw });
      expect([raw, config.misconfigured]).toEqual([
        raw,
        "RESUME_WEBHOOK_URL is not an http(s) URL",
      ]);
    }
    const fine = readConfig({ AGENT_TOKENS: "tok", RESUME_WEBHOOK_URL: "https://hooks.example/d" });
    expect(fine.misconfigured).toBeNull();
  });
});

describe("operator tokens", () => {
  it("a token listed as both an agent's and an operator's refuses to serve", () => {
    const config = readConfig({
      AGENT_TOKENS: "acme:shared-token,plain",
      OPERATOR_TOKENS: "own-token,shared-token",
    });
    expect(config.misconfigured).toContain("OPERATOR_TOKENS entry 2 is also an agent token");
    expect(config.misconfigured).not.toContain("shared-token");
    expect(readConfig({ AGENT_TOKENS: "a", OPERATOR_TOKENS: "b" }).misconfigured).toBeNull();
  });
});

describe("allowlist entries", () => {
  it("origins with a port, a wildcard port or none are accepted", () => {
    const config = readConfig({
      RESUME_URL_ALLOWLIST: "http://127.0.0.1:*,https://hooks.example,https://hooks.example:8443/",
      TENANT_SETTINGS: '{"acme": {"resume_url_allowlist": ["http://[::1]:*"]}}',
    });
    expect(config.misconfigured).toBeNull();
  });

  it("an entry that is not an origin refuses to serve instead of silently matching nothing", () => {
    for (const [vars, named] of [
      [
        { RESUME_URL_ALLOWLIST: "https://ok.example,hooks.example" },
        "RESUME_URL_ALLOWLIST entry 2",
      ],
      [{ RESUME_URL_ALLOWLIST: "https://hooks.example/resume" }, "RESUME_URL_ALLOWLIST entry 1"],
      [{ RESUME_URL_ALLOWLIST: "ftp://hooks.example" }, "RESUME_URL_ALLOWLIST entry 1"],
      [{ RESUME_URL_ALLOWLIST: "https://user@hooks.example" }, "RESUME_URL_ALLOWLIST entry 1"],
      [
        { TENANT_SETTINGS: '{"acme": {"resume_url_allowlist": ["hooks.acme.example"]}}' },
        "TENANT_SETTINGS.acme.resume_url_allowlist entry 1",
      ],
      [{ RUNNER_URL_ALLOWLIST: "http://runner.example/v1" }, "RUNNER_URL_ALLOWLIST entry 1"],
      [
        { TENANT_SETTINGS: '{"acme": {"runner_url_allowlist": ["runner.acme.example"]}}' },
        "TENANT_SETTINGS.acme.runner_url_allowlist entry 1",
      ],
      [{ RESUME_BINDING_ALLOWLIST: "AGENT,my-agent" }, "RESUME_BINDING_ALLOWLIST entry 2"],
      [
        { TENANT_SETTINGS: '{"acme": {"resume_binding_allowlist": ["1AGENT"]}}' },
        "TENANT_SETTINGS.acme.resume_binding_allowlist entry 1",
      ],
    ] as const) {
      expect(readConfig(vars).misconfigured).toContain(named);
    }
  });

  it("a tenant's runner allowlist replaces RUNNER_URL_ALLOWLIST; another tenant keeps the global", () => {
    const config = readConfig({
      RUNNER_URL_ALLOWLIST: "http://127.0.0.1:*",
      TENANT_SETTINGS: '{"acme": {"runner_url_allowlist": []}}',
    });
    expect(config.misconfigured).toBeNull();
    expect(runnerUrlAllowlistFor(config, "acme")).toEqual([]);
    expect(runnerUrlAllowlistFor(config, "globex")).toEqual(["http://127.0.0.1:*"]);
  });
});
