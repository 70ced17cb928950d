import { describe, expect, it } from "vitest";
import { call, complete, createSession, reserve, result, uniqueId, view } from "../support/api";

const page = async (sid: string, query: string) =>
  (await call("GET", `/v1/sessions/${sid}/messages${query}`)).body;

describe("paged messages and job summaries", () => {
  it("messages page by index with after, before and limit, and next_after says where to go on", async () => {
    const sid = uniqueId("pages");
    await createSession(sid);
    for (let i = 0; i < 7; i += 1) {
      await call("POST", `/v1/sessions/${sid}/messages`, {
        body: { role: i % 2 === 0 ? "user" : "assistant", content: `m${i}`, metadata: { i } },
      });
    }
    expect((await view(sid)).message_count).toBe(7);
    const first = await page(sid, "?limit=3");
    expect(first.messages.map((m: { index: number }) => m.index)).toEqual([0, 1, 2]);
    expect(first.next_after).toBe(2);
    expect(first.messages[1]).toMatchObject({
      index: 1,
      role: "assistant",
      content: "m1",
      metadata: { i: 1 },
    });
    expect(typeof first.messages[0].created_at).toBe("string");
    const second = await page(sid, `?after=${first.next_after}&limit=3`);
    expect(second.messages.map((m: { index: number }) => m.index)).toEqual([3, 4, 5]);
    const last = await page(sid, `?after=${second.next_after}&limit=3`);
    expect(last).toMatchObject({ messages: [{ index: 6 }], next_after: null });
    const window = await page(sid, "?after=1&before=5");
    expect(window.messages.map((m: { index: number }) => m.index)).toEqual([2, 3, 4]);
    expect(window.next_after).toBeNull();
    expect(await page(sid, "?after=6")).toEqual({ messages: [], next_after: null });
  });

  it("a bad page query gets 422 and an unknown session 404", async () => {
    const sid = uniqueId("pages-bad");
    await createSession(sid);
    for (const query of ["?limit=0", "?limit=501", "?after=-1", "?before=x", "?other=1"]) {
      const answer = await call("GET", `/v1/sessions/${sid}/messages${query}`);
      expect([query, answer.status, answer.body.code]).toEqual([query, 422, "invalid_request"]);
    }
    for (const query of ["?status=lost", "?limit=0", "?after=abc"]) {
      const answer = await call("GET", `/v1/sessions/${sid}/exec-jobs${query}`);
      expect([query, answer.status, answer.body.code]).toEqual([query, 422, "invalid_request"]);
    }
    expect((await call("GET", `/v1/sessions/${uniqueId("nobody")}/messages`)).status).toBe(404);
  });

  it("the job list is summaries in reservation order, filtered by status, with a cursor", async () => {
    const sid = uniqueId("job-pages");
    await createSession(sid);
    const tokens: Record<string, string> = {};
    for (const handle of ["z1", "a2", "m3", "b4", "c5"])
      tokens[handle] = (await reserve(sid, handle)).callback.token;
    for (const handle of ["a2", "b4"])
      await complete(sid, handle, tokens[handle]!, result(0, `out ${handle}`));
    const list = async (query: string) =>
      (await call("GET", `/v1/sessions/${sid}/exec-jobs${query}`)).body;

    const all = await list("");
    expect(all.jobs.map((job: { handle: string }) => job.handle)).toEqual([
      "z1",
      "a2",
      "m3",
      "b4",
      "c5",
    ]);
    expect(all.next).toBeNull();
    for (const job of all.jobs) expect(job).not.toHaveProperty("output");
    expect(all.jobs[1]).toMatchObject({
      handle: "a2",
      status: "completed",
      output_bytes_total: 6,
      exit_code: 0,
    });

    const done = await list("?status=done");
    expect(done.jobs.map((job: { handle: string }) => job.handle)).toEqual(["a2", "b4"]);
    const running = await list("?status=running&limit=2");
    expect(running.jobs.map((job: { handle: string }) => job.handle)).toEqual(["z1", "m3"]);
    const rest = await list(`?status=running&limit=2&after=${running.next}`);
    expect(rest).toMatchObject({ jobs: [{ handle: "c5" }], next: null });
  });
});
