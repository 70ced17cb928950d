import { describe, expect, it } from "vitest";
import { readConfig, resumeTargetsFor } from "./config";
import { wakePath, willWake } from "./wake-path";

const SIGNING_SECRET = "whsec_d2FrZS1wYXRoLXNpZ25pbmctc2VjcmV0LTAxMjM0NTY3ODk=";
const targets = {
  resumeSigningSecret: SIGNING_SECRET,
  resumeWebhookUrl: null,
  resumeUrlAllowlist: ["https://hooks.example"],
  resumeBindingAllowlist: ["WAKE_AGENT", "NOT_BOUND"],
};
const bound = (binding: string) => binding === "WAKE_AGENT";
const session = (over: { resumeUrl?: string | null; resumeBinding?: string | null } = {}) => ({
  resumeUrl: null,
  resumeBinding: null,
  ...over,
});

describe("the wake path", () => {
  it("a session's own resume_url on the allowlist wakes through the webhook", () => {
    expect(wakePath(session({ resumeUrl: "https://hooks.example/r" }), targets, bound)).toBe(
      "webhook",
    );
  });

  it("a resume_url whose origin the allowlist no longer lists wakes nothing", () => {
    const withdrawn = { ...targets, resumeUrlAllowlist: [] };
    expect(wakePath(session({ resumeUrl: "https://hooks.example/r" }), withdrawn, bound)).toBe(
      null,
    );
  });

  it("a bound binding on the allowlist wakes through the binding", () => {
    expect(wakePath(session({ resumeBinding: "WAKE_AGENT" }), targets, bound)).toBe("binding");
  });

  it("a binding the env does not hold, or the allowlist dropped, wakes nothing and never falls back to the default webhook", () => {
    const withDefault = { ...targets, resumeWebhookUrl: "https://hooks.example/default" };
    expect(wakePath(session({ resumeBinding: "NOT_BOUND" }), withDefault, bound)).toBe(null);
    const dropped = { ...withDefault, resumeBindingAllowlist: [] };
    expect(wakePath(session({ resumeBinding: "WAKE_AGENT" }), dropped, bound)).toBe(null);
  });

  it("a session that names no target wakes through the deployment's default, else nothing", () => {
    const withDefault = { ...targets, resumeWebhookUrl: "https://hooks.example/default" };
    expect(wakePath(session(), withDefault, bound)).toBe("webhook");
    expect(wakePath(session(), targets, bound)).toBe(null);
  });

  it("another tenant does not inherit RESUME_WEBHOOK_URL; its own default from TENANT_SETTINGS counts", () => {
    const config = readConfig({
      AGENT_TOKENS: "tok,acme:a,globex:g",
      RESUME_SIGNING_SECRET: SIGNING_SECRET,
      RESUME_WEBHOOK_URL: "https://hooks.example/default",
      RESUME_URL_ALLOWLIST: "https://hooks.example",
      TENANT_SETTINGS: JSON.stringify({ globex: { resume_webhook_url: "https://g.example/h" } }),
    });
    const via = (tenant: string) => wakePath(session(), resumeTargetsFor(config, tenant), bound);
    expect([via("default"), via("acme"), via("globex")]).toEqual(["webhook", null, "webhook"]);
  });

  it("without RESUME_SIGNING_SECRET no webhook can be sent, so a session's resume_url and the default wake nothing", () => {
    const config = readConfig({
      AGENT_TOKENS: "tok",
      RESUME_URL_ALLOWLIST: "https://hooks.example",
      RESUME_WEBHOOK_URL: "https://hooks.example/default",
    });
    const unsigned = resumeTargetsFor(config, "default");
    expect(wakePath(session({ resumeUrl: "https://hooks.example/r" }), unsigned, bound)).toBe(null);
    expect(wakePath(session(), unsigned, bound)).toBe(null);
    // A binding is no webhook: it needs no signature.
    const bindings = { ...unsigned, resumeBindingAllowlist: ["WAKE_AGENT"] };
    expect(wakePath(session({ resumeBinding: "WAKE_AGENT" }), bindings, bound)).toBe("binding");
  });

  it("will_wake is true exactly when there is a path", () => {
    expect([willWake("webhook"), willWake("binding"), willWake(null)]).toEqual([true, true, false]);
  });
});
