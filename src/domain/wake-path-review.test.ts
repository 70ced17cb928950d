// Failing tests a review of the wake path found: a webhook that can never be sent is shown as a
// wake. Without RESUME_SIGNING_SECRET every webhook delivery fails ("RESUME_SIGNING_SECRET is not
// set", resume-webhook.ts), and a RESUME_WEBHOOK_URL that is no http(s) URL cannot be fetched.
import { describe, expect, it } from "vitest";
import { readConfig, resumeTargetsFor } from "./config";
import { wakePath } from "./wake-path";

const bound = () => true;
const session = (resumeUrl: string | null) => ({ resumeUrl, resumeBinding: null });

/** The settings a session object decides with (its ctx.config): the tenant's targets over the rest. */
const settings = (vars: Record<string, string>) => {
  const config = readConfig({ AGENT_TOKENS: "tok", ...vars });
  return { ...config, ...resumeTargetsFor(config, "default") };
};

describe("the wake path of a webhook that can never be sent (review)", () => {
  it("without RESUME_SIGNING_SECRET no webhook wakes: wake.via is null", () => {
    const unsigned = settings({
      RESUME_URL_ALLOWLIST: "https://hooks.example",
      RESUME_WEBHOOK_URL: "https://hooks.example/default",
    });
    expect(wakePath(session("https://hooks.example/r"), unsigned, bound)).toBe(null);
    expect(wakePath(session(null), unsigned, bound)).toBe(null);
  });

  it("a RESUME_WEBHOOK_URL that is no http(s) URL wakes nothing (or the settings are refused)", () => {
    const config = settings({
      RESUME_SIGNING_SECRET: "whsec_cmV2aWV3LXNpZ25pbmctc2VjcmV0LTAxMjM0NTY3ODk=",
      RESUME_WEBHOOK_URL: "not a url",
    });
    const refused = config.misconfigured !== null;
    expect(refused || wakePath(session(null), config, bound) === null).toBe(true);
  });
});
