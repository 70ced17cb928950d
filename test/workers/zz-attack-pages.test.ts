import { describe, expect, it } from "vitest";
import { call, createSession, uniqueId } from "../support/api";

const MiB = 1024 * 1024;
const bytesOf = (body: unknown) => new TextEncoder().encode(JSON.stringify(body)).byteLength;

describe("attack: page byte bounds", () => {
  it("a message page of 3-byte characters stays under 1 MiB", async () => {
    const sid = uniqueId("pages-msg");
    await createSession(sid);
    const content = "中".repeat(262_000); // 786,000 bytes of UTF-8: under the 1 MiB message limit
    for (let i = 0; i < 4; i += 1) {
      const posted = await call("POST", `/v1/sessions/${sid}/messages`, { body: { role: "user", content } });
      expect(posted.status).toBe(201);
    }
    const page = await call("GET", `/v1/sessions/${sid}/messages?limit=500`);
    console.log("message page", page.status, page.body.messages.length, "messages", bytesOf(page.body), "bytes");
    expect(bytesOf(page.body)).toBeLessThan(MiB);
  }, 60_000);

  it("a job-summary page of escaped commands stays under 1 MiB", async () => {
    const sid = uniqueId("pages-jobs");
    await createSession(sid);
    const command = "\u0001".repeat(8192); // 8 KiB of UTF-8, 48 KiB once JSON-escaped
    for (let i = 0; i < 80; i += 1) {
      const reserved = await call("POST", `/v1/sessions/${sid}/exec-jobs`, { body: { handle: `h${i}`, command } });
      expect(reserved.status).toBe(201);
    }
    const page = await call("GET", `/v1/sessions/${sid}/exec-jobs?limit=500`);
    console.log("job page", page.status, page.body.jobs.length, "jobs", bytesOf(page.body), "bytes");
    expect(bytesOf(page.body)).toBeLessThan(MiB);
  }, 60_000);
});
