import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { completionEnvelope } from "../../src/domain/messages";
import type { Job, JobResult } from "../../src/domain/state";
import * as api from "../support/api";

const MiB = 1024 * 1024;
const JOBS = 200;
const OUTPUT_BYTES = 256 * 1024;
const MESSAGES = 20_000;
const UNACKED = 1_000;

/** The bytes of an answer as it travels. */
async function measured(method: string, path: string, body?: unknown) {
  const answer = await api.call(method, path, { body });
  return { ...answer, bytes: new TextEncoder().encode(JSON.stringify(answer.body)).byteLength };
}

/**
 * Seeds storage directly (the pool is slow per request on a big object): 200 jobs of 256 KiB,
 * 20,000 messages, and 1,000 unacked envelopes escaped to near their 64 KiB limit.
 */
async function seed(sid: string, lifetime: string): Promise<void> {
  await runInDurableObject(api.stubOf(sid), (_, state) => {
    const sql = state.storage.sql;
    const now = Date.now();
    state.storage.transactionSync(() => {
      for (let i = 1; i <= JOBS; i += 1) {
        const output = String(i % 10).repeat(OUTPUT_BYTES);
        sql.exec(
          `INSERT INTO jobs (handle, seq, command, lifetime, reserved_at, callback_token, status, exit_code,
             output_truncated, output_bytes_total, ended_by, completed_at, generation, output)
           VALUES (?, ?, ?, ?, ?, 'unused', 'completed', 0, 0, ?, 'process', ?, NULL, ?)`,
          `old-${i}`,
          i,
          `build step ${i}`,
          lifetime,
          now - 1000,
          OUTPUT_BYTES,
          now - 500,
          output,
        );
      }
      for (let i = 0; i < MESSAGES; i += 1) {
        sql.exec(
          "INSERT INTO messages (idx, role, content, metadata, created_at) VALUES (?, 'user', ?, '{}', ?)",
          i,
          JSON.stringify(`message ${i} `.padEnd(200, "x")),
          now,
        );
      }
      // Control characters escape six-fold, twice: each envelope lands near its 64 KiB limit.
      const noisy = "\u0001".repeat(OUTPUT_BYTES);
      for (let g = 1; g <= UNACKED; g += 1) {
        const job = { handle: `env-${g}`, lifetime, command: "noisy" } as Job;
        const outcome: JobResult = {
          status: "completed",
          exitCode: 0,
          output: noisy,
          outputTruncated: false,
          outputBytesTotal: OUTPUT_BYTES,
          endedBy: "process",
        };
        const envelope = completionEnvelope(job, outcome, g, now);
        sql.exec(
          "INSERT INTO inbox (id, generation, state, lease_expires_at, acked_at, envelope) VALUES (?, ?, 'pending', NULL, NULL, ?)",
          envelope.id,
          g,
          JSON.stringify(envelope),
        );
      }
      sql.exec("UPDATE session SET job_seq = ?, generation = ?", JOBS, UNACKED);
    });
  });
  await abortAllDurableObjects();
}

describe("a session with a long history", () => {
  it("answers every route within its size bounds and keeps taking completions", async () => {
    const sid = api.uniqueId("long");
    const created = await api.createSession(sid);
    await seed(sid, created.lifetime);
    const base = `/v1/sessions/${sid}`;

    const sessionView = await measured("GET", base);
    expect(sessionView.status).toBe(200);
    expect(sessionView.body).toMatchObject({
      message_count: MESSAGES,
      jobs: { running: 0, done: JOBS },
      inbox: { pending: UNACKED, claimed: 0, generation: UNACKED },
    });
    expect(sessionView.bytes).toBeLessThan(8 * 1024);

    const jobs = await measured("GET", `${base}/exec-jobs?limit=500`);
    expect(jobs.status).toBe(200);
    expect(jobs.bytes).toBeLessThan(MiB);
    expect(jobs.body.jobs).toHaveLength(JOBS);

    const messages = await measured("GET", `${base}/messages?limit=500&after=9999`);
    expect(messages.status).toBe(200);
    expect(messages.bytes).toBeLessThan(MiB);
    expect(messages.body.messages[0].index).toBe(10_000);
    expect(messages.body.messages).toHaveLength(500);
    expect(messages.body.next_after).toBe(10_499);

    const pulled = await measured("GET", `${base}/exec-jobs/old-7`);
    expect(pulled.body.output).toHaveLength(OUTPUT_BYTES);
    expect(pulled.bytes).toBeLessThan(OUTPUT_BYTES + 4096);

    // 128 envelopes of ~57 KiB would be 7 MiB: the claim stops under its byte budget, in order.
    const claimed = await measured("POST", `${base}/inbox/claim`, { max: 128 });
    expect(claimed.status).toBe(200);
    expect(claimed.bytes).toBeLessThan(MiB);
    const taken = claimed.body.claims.map(
      (entry: { envelope: { generation: number } }) => entry.envelope.generation,
    );
    expect(taken.length).toBeGreaterThan(1);
    expect(taken.length).toBeLessThan(128);
    expect(taken).toEqual(Array.from({ length: taken.length }, (_, i) => i + 1));
    const next = await api.call("POST", `${base}/inbox/claim`, { body: { max: 1 } });
    expect(next.body.claims[0].envelope.generation).toBe(taken.length + 1);

    const ids = claimed.body.claims.map((entry: { envelope: { id: string } }) => entry.envelope.id);
    const acked = await api.call("POST", `${base}/inbox/ack`, { body: { ids } });
    expect(acked.body).toEqual({ acked: ids, unknown: [] });
    expect((await api.call("GET", `${base}/inbox`)).body).toEqual({
      pending: UNACKED - taken.length - 1,
      claimed: 1,
      acked: taken.length,
      generation: UNACKED,
    });

    // The conversation goes on: append, reserve, suspend, complete, wake.
    const appended = await api.call("POST", `${base}/messages`, {
      body: { role: "user", content: "hi" },
    });
    expect(appended.body).toEqual({ index: MESSAGES });
    const job = await api.reserve(sid, "new-1");
    const runId = await api.registerRun(sid);
    const suspended = await api.suspend(sid, runId, ["new-1"]);
    expect(suspended.status).toBe(200);
    expect(new TextEncoder().encode(JSON.stringify(suspended.body)).byteLength).toBeLessThan(8192);
    const done = await api.complete(sid, "new-1", job.callback.token, api.result(0, "fresh"));
    expect(done.body).toMatchObject({
      outcome: "accepted",
      generation: UNACKED + 1,
      disposition: "resume_scheduled",
    });
    expect((await api.view(sid)).status).toBe("resuming");
  }, 120_000);
});

describe("limits that answer instead of crashing", () => {
  it("a message over 1 MiB of JSON gets 413 and stores nothing; one just under is kept", async () => {
    const sid = api.uniqueId("big-message");
    await api.createSession(sid);
    const tooBig = await api.call("POST", `/v1/sessions/${sid}/messages`, {
      body: { role: "user", content: "x".repeat(MiB) },
    });
    expect([tooBig.status, tooBig.body.code]).toEqual([413, "payload_too_large"]);
    expect(tooBig.headers.get("content-type")).toBe("application/problem+json");
    expect((await api.view(sid)).message_count).toBe(0);
    const fits = await api.call("POST", `/v1/sessions/${sid}/messages`, {
      body: { role: "user", content: "x".repeat(MiB - 100) },
    });
    expect(fits.status).toBe(201);
    const listed = (await api.call("GET", `/v1/sessions/${sid}/messages`)).body;
    expect(listed.messages).toHaveLength(1);
    expect(listed.messages[0].content).toHaveLength(MiB - 100);
  });

  it("session metadata over 64 KiB gets 413 and no session is created", async () => {
    const sid = api.uniqueId("big-metadata");
    const answer = await api.call("POST", "/v1/sessions", {
      body: { id: sid, metadata: { notes: "x".repeat(64 * 1024) } },
    });
    expect([answer.status, answer.body.code]).toEqual([413, "payload_too_large"]);
    expect((await api.call("GET", `/v1/sessions/${sid}`)).status).toBe(404);
  });

  it("a message page stops before its byte budget but always carries one message", async () => {
    const sid = api.uniqueId("fat-pages");
    await api.createSession(sid);
    for (let i = 0; i < 3; i += 1) {
      await api.call("POST", `/v1/sessions/${sid}/messages`, {
        body: { role: "user", content: `${i}`.repeat(600 * 1024) },
      });
    }
    const first = await measured("GET", `/v1/sessions/${sid}/messages?limit=500`);
    expect(first.body.messages).toHaveLength(1);
    expect(first.body.next_after).toBe(0);
    const second = (await api.call("GET", `/v1/sessions/${sid}/messages?after=0`)).body;
    expect(second.messages.map((m: { index: number }) => m.index)).toEqual([1]);
  });
});
