import { describe, expect, it } from "vitest";
import { type Answer, call, createSession, uniqueId } from "../support/api";

type JobPage = { jobs: { handle: string }[]; next: number | null };

const MiB = 1024 * 1024;
const bytesOf = (body: unknown) => new TextEncoder().encode(JSON.stringify(body)).byteLength;

// Byte budgets count what travels: UTF-8 of the JSON, not string length before escaping.
describe("pages stay under 1 MiB whatever the characters", () => {
  it("a message page of 3-byte characters stops under its budget and the rest follows", async () => {
    const sid = uniqueId("pages-cjk");
    await createSession(sid);
    const content = "中".repeat(262_000); // 786,000 bytes of UTF-8: under the 1 MiB message limit
    for (let i = 0; i < 4; i += 1) {
      const posted = await call("POST", `/v1/sessions/${sid}/messages`, {
        body: { role: "user", content },
      });
      expect(posted.status).toBe(201);
    }
    const seen: number[] = [];
    let after = -1;
    for (let pages = 0; pages < 10 && after !== null; pages += 1) {
      const query = after < 0 ? "?limit=500" : `?limit=500&after=${after}`;
      const page = await call("GET", `/v1/sessions/${sid}/messages${query}`);
      expect(bytesOf(page.body)).toBeLessThan(MiB);
      seen.push(...page.body.messages.map((message: { index: number }) => message.index));
      after = page.body.next_after;
    }
    expect(seen).toEqual([0, 1, 2, 3]);
  }, 60_000);

  it("a job-summary page of commands that escape six-fold stops under its budget", async () => {
    const sid = uniqueId("pages-escaped");
    await createSession(sid);
    const command = "\u0001".repeat(8192); // 8 KiB of UTF-8, 48 KiB once JSON-escaped
    for (let i = 0; i < 80; i += 1) {
      const reserved = await call("POST", `/v1/sessions/${sid}/exec-jobs`, {
        body: { handle: `h${i}`, command },
      });
      expect(reserved.status).toBe(201);
    }
    const seen: string[] = [];
    let after: number | null = 0;
    for (let pages = 0; pages < 40 && after !== null; pages += 1) {
      const page: Answer<JobPage> = await call<JobPage>(
        "GET",
        `/v1/sessions/${sid}/exec-jobs?limit=500&after=${after}`,
      );
      expect(bytesOf(page.body)).toBeLessThan(MiB);
      expect(page.body.jobs.length).toBeGreaterThan(0);
      seen.push(...page.body.jobs.map((job) => job.handle));
      after = page.body.next;
    }
    expect(seen).toEqual(Array.from({ length: 80 }, (_, i) => `h${i}`));
  }, 60_000);
});
