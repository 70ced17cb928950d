import { describe, expect, it } from "vitest";
import { checkResumeUrl } from "./resume-url";

const ALLOW = ["http://127.0.0.1:*", "https://agents.example.com"];

describe("resume_url allowlist", () => {
  it.each([
    ["http://127.0.0.1:9000/hook", true],
    ["http://127.0.0.1/hook", true],
    ["https://agents.example.com/hook", true],
    ["https://agents.example.com:443/hook", true],
    ["https://agents.example.com:8443/hook", false],
    ["http://agents.example.com/hook", false],
    ["https://agents.example.com.evil.test/hook", false],
    ["http://localhost:9000/hook", false],
    ["https://user:pw@agents.example.com/hook", false],
    ["ftp://127.0.0.1/hook", false],
    ["not a url", false],
  ])("%s is allowed: %s", (url, allowed) => {
    expect(checkResumeUrl(url, ALLOW).ok).toBe(allowed);
  });
});
