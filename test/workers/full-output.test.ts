import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { getPage, signedInCookie } from "../support/console";
import { bytesOf, partPath, sha256, upload } from "../support/full-output";
import { ACME_AGENT_TOKEN, OPERATOR_TOKEN } from "../support/secrets";

const DAY = 24 * 60 * 60 * 1000;

/** The keys the bucket holds under a session's prefix. */
async function keysOf(sid: string): Promise<string[]> {
  const listed = await env.OUTPUTS.list({ prefix: `outputs/default/${sid}/` });
  return listed.objects.map((object) => object.key);
}

/** A session with one running job `h1` and two uploaded parts; returns what a completion names. */
async function uploaded(sid: string) {
  await api.createSession(sid);
  const token = (await api.reserve(sid, "h1")).callback.token;
  const parts = [bytesOf(3000, 1), bytesOf(1234, 2)];
  for (const [index, bytes] of parts.entries()) {
    const answer = await upload(sid, "h1", token, index, bytes);
    expect(answer.status).toBe(201);
  }
  const whole = new Uint8Array([...parts[0]!, ...parts[1]!]);
  const fullOutput = {
    bytes: whole.byteLength,
    sha256: await sha256(whole),
    parts: await Promise.all(
      parts.map(async (bytes) => ({ bytes: bytes.byteLength, sha256: await sha256(bytes) })),
    ),
  };
  return { token, whole, fullOutput };
}

const completeWith = (sid: string, token: string, fullOutput: unknown) =>
  api.complete(sid, "h1", token, api.result(0, "tail", { full_output: fullOutput }));

const read = (sid: string, range?: string, token?: string) =>
  api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1/output`, {
    ...(token === undefined ? {} : { token }),
    headers: range === undefined ? {} : { range },
  });

async function readBytes(sid: string, range?: string) {
  const response = await api.workerFetch(
    new Request(`http://exec-inbox.test/v1/sessions/${sid}/exec-jobs/h1/output`, {
      headers: {
        authorization: `Bearer ${api.AGENT_TOKEN}`,
        ...(range === undefined ? {} : { range }),
      },
    }),
  );
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
}

describe("full outputs", () => {
  it("a completion names its uploaded parts, and the pull and the summary show the full output", async () => {
    const sid = api.uniqueId("full");
    const { token, fullOutput } = await uploaded(sid);
    expect((await completeWith(sid, token, fullOutput)).status).toBe(202);
    const shown = { bytes: fullOutput.bytes, sha256: fullOutput.sha256 };
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.full_output).toEqual(
      shown,
    );
    expect(
      (await api.call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs[0].full_output,
    ).toEqual(shown);
    // The same completion again is a duplicate; another full output is another result.
    expect((await completeWith(sid, token, fullOutput)).status).toBe(200);
    const other = { ...fullOutput, parts: [fullOutput.parts[0]], bytes: 3000 };
    expect((await completeWith(sid, token, other)).body.code).toBe("result_conflict");
  });

  it("a job without a full output shows null and its output route is not found", async () => {
    const sid = api.uniqueId("no-full");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    expect((await api.complete(sid, "h1", token, api.result(0, "x"))).status).toBe(202);
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body.full_output).toBeNull();
    expect((await read(sid)).status).toBe(404);
  });

  it("a completion naming a part not uploaded, or with other bytes, is refused with each part named and changes nothing", async () => {
    const sid = api.uniqueId("missing");
    const { token, fullOutput } = await uploaded(sid);
    const third = { bytes: 10, sha256: "a".repeat(64) };
    const missing = {
      ...fullOutput,
      bytes: fullOutput.bytes + 10,
      parts: [...fullOutput.parts, third],
    };
    const refused = await completeWith(sid, token, missing);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: "output_incomplete",
      errors: [{ path: "full_output.parts.2", message: expect.stringContaining("not uploaded") }],
    });
    const resized = {
      ...fullOutput,
      bytes: fullOutput.bytes + 1,
      parts: [fullOutput.parts[0], { ...fullOutput.parts[1], bytes: 1235 }],
    };
    const wrong = await completeWith(sid, token, resized);
    expect(wrong.body.errors).toEqual([
      { path: "full_output.parts.1", message: "part 1 has 1234 bytes, not 1235" },
    ]);
    const job = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).body;
    expect([job.status, job.full_output]).toEqual(["running", null]);
    // The runner re-sends what was named, and the completion then goes through.
    expect((await completeWith(sid, token, fullOutput)).status).toBe(202);
  });

  it("a part whose bytes do not match its SHA-256 is refused and stores nothing; a part sent again replaces itself", async () => {
    const sid = api.uniqueId("digest");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    const bytes = bytesOf(5000, 7);
    const refused = await upload(sid, "h1", token, 0, bytes, await sha256(bytesOf(5000, 8)));
    expect([refused.status, refused.body.code]).toEqual([422, "digest_mismatch"]);
    expect(await keysOf(sid)).toEqual([]);
    expect((await upload(sid, "h1", token, 0, bytes)).status).toBe(201);
    expect((await upload(sid, "h1", token, 0, bytes)).status).toBe(201);
    expect(await keysOf(sid)).toHaveLength(1);
  });

  it("each bad upload gets its problem and stores nothing", async () => {
    const sid = api.uniqueId("bad-part");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    const other = (await api.reserve(sid, "h2")).callback.token;
    const bytes = bytesOf(100, 1);
    const sha = await sha256(bytes);
    const put = (path: string, headers: Record<string, string>, as = token) =>
      api.call("PUT", path, { token: as, raw: bytes, headers });
    const cases = [
      [await put(partPath(sid, "h1", 0), {}), 422, "invalid_request"],
      [await put(partPath(sid, "h1", 0), { "x-content-sha256": "XYZ" }), 422, "invalid_request"],
      [await put(partPath(sid, "h1", 1000), { "x-content-sha256": sha }), 404, "not_found"],
      [await put(partPath(sid, "h1", 0), { "x-content-sha256": sha }, other), 401, "unauthorized"],
      [
        await put(partPath(sid, "h1", 0), { "x-content-sha256": sha }, api.AGENT_TOKEN),
        401,
        "unauthorized",
      ],
    ] as const;
    expect(cases.map(([answer]) => [answer.status, answer.body.code])).toEqual(
      cases.map(([, status, code]) => [status, code]),
    );
    expect(await keysOf(sid)).toEqual([]);
  });

  it("a job with a result takes no more parts", async () => {
    const sid = api.uniqueId("fixed");
    const { token, fullOutput } = await uploaded(sid);
    expect((await completeWith(sid, token, fullOutput)).status).toBe(202);
    const late = await upload(sid, "h1", token, 2, bytesOf(10, 3));
    expect([late.status, late.body.code]).toEqual([409, "result_conflict"]);
    expect(await keysOf(sid)).toHaveLength(2);
  });

  it("the output is read whole (200) or by range (206) with Content-Range, Accept-Ranges and an ETag; past the end is 416", async () => {
    const sid = api.uniqueId("range");
    const { token, whole, fullOutput } = await uploaded(sid);
    await completeWith(sid, token, fullOutput);
    const all = await readBytes(sid);
    expect(all.response.status).toBe(200);
    expect(all.bytes).toEqual(whole);
    expect(all.response.headers.get("etag")).toBe(`"${fullOutput.sha256}"`);
    expect(all.response.headers.get("accept-ranges")).toBe("bytes");
    // Across the border of the two parts.
    const across = await readBytes(sid, "bytes=2990-3009");
    expect(across.response.status).toBe(206);
    expect(across.response.headers.get("content-range")).toBe(
      `bytes 2990-3009/${whole.byteLength}`,
    );
    expect(across.bytes).toEqual(whole.slice(2990, 3010));
    const suffix = await readBytes(sid, "bytes=-5");
    expect(suffix.bytes).toEqual(whole.slice(-5));
    const open = await readBytes(sid, "bytes=4000-");
    expect(open.bytes).toEqual(whole.slice(4000));
    const past = await read(sid, `bytes=${whole.byteLength}-`);
    expect([past.status, past.body.code, past.headers.get("content-range")]).toEqual([
      416,
      "range_not_satisfiable",
      `bytes */${whole.byteLength}`,
    ]);
  });

  it("an operator reads it through /v1/ops, and the console links it and shows it as text", async () => {
    const sid = api.uniqueId("console");
    const { token, whole, fullOutput } = await uploaded(sid);
    await completeWith(sid, token, fullOutput);
    const ops = await api.workerFetch(
      new Request(`http://exec-inbox.test/v1/ops/sessions/default/${sid}/exec-jobs/h1/output`, {
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, range: "bytes=0-99" },
      }),
    );
    expect(ops.status).toBe(206);
    expect(new Uint8Array(await ops.arrayBuffer())).toEqual(whole.slice(0, 100));
    const cookie = await signedInCookie();
    const page = await (await getPage(`/console/sessions/default/${sid}`, cookie)).text();
    expect(page).toContain(`/console/sessions/default/${sid}/jobs/h1/output`);
    expect(page).toContain(`full: ${whole.byteLength} bytes`);
    const jobPage = await (
      await getPage(`/console/sessions/default/${sid}/jobs/h1`, cookie)
    ).text();
    // Relative to …/jobs/h1: it opens …/jobs/h1/output.
    expect(jobPage).toContain('href="h1/output"');
    expect(jobPage).toContain(fullOutput.sha256);
    const shown = await getPage(`/console/sessions/default/${sid}/jobs/h1/output`, cookie);
    expect(shown.status).toBe(200);
    expect(shown.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(new Uint8Array(await shown.arrayBuffer())).toEqual(whole);
  });

  it("another tenant's token gets 404 for the output", async () => {
    const sid = api.uniqueId("tenant");
    const { token, fullOutput } = await uploaded(sid);
    await completeWith(sid, token, fullOutput);
    expect((await read(sid, undefined, ACME_AGENT_TOKEN)).status).toBe(404);
  });

  it("the job's purge deletes its parts, and the output answers 410", async () => {
    const sid = api.uniqueId("purge");
    const { token, fullOutput } = await uploaded(sid);
    await completeWith(sid, token, fullOutput);
    expect(await keysOf(sid)).toHaveLength(2);
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE jobs SET completed_at = ?", Date.now() - DAY - 1000);
    });
    await abortAllDurableObjects();
    await api.until(async () => expect((await read(sid)).status).toBe(410));
    await api.until(async () => expect(await keysOf(sid)).toEqual([]));
  });

  it("a running job's parts go with its purge too, once it ends without naming them", async () => {
    const sid = api.uniqueId("orphan");
    const { token } = await uploaded(sid);
    expect((await api.complete(sid, "h1", token, api.result(0, "x"))).status).toBe(202);
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE jobs SET completed_at = ?", Date.now() - DAY - 1000);
    });
    await abortAllDurableObjects();
    // A request starts the object again; its alarm, due at once, purges.
    await api.until(async () =>
      expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs/h1`)).status).toBe(410),
    );
    await api.until(async () => expect(await keysOf(sid)).toEqual([]));
  });

  it("deleting the session deletes its parts from the alarm, then keeps no storage", async () => {
    const sid = api.uniqueId("delete");
    const { token, fullOutput } = await uploaded(sid);
    await completeWith(sid, token, fullOutput);
    expect((await api.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    // The lifetime is fenced at once.
    expect((await upload(sid, "h1", token, 0, bytesOf(10, 1))).body.code).toBe("lifetime_ended");
    await api.until(async () => expect(await keysOf(sid)).toEqual([]));
    await api.until(async () => {
      const left = await runInDurableObject(api.stubOf(sid), (_, state) =>
        state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
      );
      expect(left.filter((row) => !String(row.name).startsWith("_cf"))).toEqual([]);
    });
  });

  it("an operator's delete deletes the parts too", async () => {
    const sid = api.uniqueId("ops-delete");
    const { token, fullOutput } = await uploaded(sid);
    await completeWith(sid, token, fullOutput);
    const deleted = await api.call("DELETE", `/v1/ops/sessions/default/${sid}`, {
      token: OPERATOR_TOKEN,
    });
    expect(deleted.status).toBe(204);
    await api.until(async () => expect(await keysOf(sid)).toEqual([]));
  });

  it("a session with thousands of parts is deleted in bounded batches, the lifetime fenced at once", async () => {
    const sid = api.uniqueId("many");
    const { token } = await uploaded(sid);
    const created = (await api.view(sid)).lifetime as string;
    // As if thousands of parts had been uploaded: the sweep lists and deletes them in batches.
    const prefix = `outputs/default/${sid}/${created}/h1/1/`;
    const keys = Array.from({ length: 4500 }, (_, i) => `${prefix}x${String(i).padStart(5, "0")}`);
    for (let i = 0; i < keys.length; i += 500) {
      await Promise.all(keys.slice(i, i + 500).map((key) => env.OUTPUTS.put(key, "x")));
    }
    expect((await api.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect((await upload(sid, "h1", token, 0, bytesOf(10, 1))).body.code).toBe("lifetime_ended");
    // Each alarm deletes at most 4,000 objects: one run leaves some for the next.
    await api.until(async () => expect(await keysOf(sid)).toEqual([]), 60_000);
  }, 90_000);
});
