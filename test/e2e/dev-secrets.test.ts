import { describe, expect, it } from "vitest";
import { DEV_SECRETS, servesDevSecretsRemotely } from "../../src/auth/dev-secrets";
import { readConfig } from "../../src/domain/config";
import { devVar } from "../support/local-stack";

describe("development secrets", () => {
  it("the Worker's list of development secrets equals .dev.vars.example", () => {
    for (const [name, value] of Object.entries(DEV_SECRETS)) expect(devVar(name)).toBe(value);
  });

  it("a Worker configured with them serves loopback only", () => {
    const config = readConfig({ AGENT_TOKENS: DEV_SECRETS.AGENT_TOKENS });
    expect(servesDevSecretsRemotely(config, "127.0.0.1")).toBe(false);
    expect(servesDevSecretsRemotely(config, "localhost")).toBe(false);
    expect(servesDevSecretsRemotely(config, "exec-inbox.example.workers.dev")).toBe(true);
    expect(
      servesDevSecretsRemotely(
        readConfig({ AGENT_TOKENS: "real" }),
        "exec-inbox.example.workers.dev",
      ),
    ).toBe(false);
  });
});
