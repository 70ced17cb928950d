// A read of a full output resumed with If-Range (RFC 9110 §13.1.5, issue 31): a validator that
// matches gets the range, any other gets the whole output, so a client never splices two outputs.
import { describe, expect, it } from "vitest";
import * as api from "../support/api";
import { getPage, signedInCookie } from "../support/console";
import { bytesOf, sha256, upload } from "../support/full-output";
import { OPERATOR_TOKEN } from "../support/secrets";

/** Session `sid` (created now) with job h1 completed, naming `bytes` as its one-part full output. */
async function completedWith(sid: string, bytes: Uint8Array): Promise<string> {
  await api.createSession(sid);
  const token = (await api.reserve(sid, "h1")).callback.token;
  expect((await upload(sid, "h1", token, 0, bytes)).status).toBe(201);
  const hash = await sha256(bytes);
  const part = { bytes: bytes.byteLength, sha256: hash };
  const fullOutput = { bytes: bytes.byteLength, sha256: hash, parts: [part] };
  const result = api.result(0, "t", { full_output: fullOutput });
  expect((await api.complete(sid, "h1", token, result)).status).toBe(202);
  return `"${hash}"`;
}

/** Bytes by their length and hash: a failing comparison prints two lines, not the bytes. */
const digest = async (bytes: Uint8Array) => ({
  length: bytes.byteLength,
  sha256: await sha256(bytes),
});

/** What a client sees of an answer: its status, its Content-Range and its body. */
const seen = async (response: Response) => ({
  status: response.status,
  range: response.headers.get("content-range"),
  ...(await digest(new Uint8Array(await response.arrayBuffer()))),
});

const whole = async (bytes: Uint8Array) => ({ status: 200, range: null, ...(await digest(bytes)) });

const ranged = async (bytes: Uint8Array, start: number, end: number) => ({
  status: 206,
  range: `bytes ${start}-${end}/${bytes.byteLength}`,
  ...(await digest(bytes.slice(start, end + 1))),
});

const read = (path: string, headers: Record<string, string>, token = api.AGENT_TOKEN) =>
  api
    .workerFetch(
      new Request(`http://exec-inbox.test${path}`, {
        headers: { authorization: `Bearer ${token}`, ...headers },
      }),
    )
    .then(seen);

const outputPath = (sid: string) => `/v1/sessions/${sid}/exec-jobs/h1/output`;

describe("If-Range on a full output's read", () => {
  it("a read resumed with the old ETag after the session was re-created gets the new output whole, not a range of it", async () => {
    const sid = api.uniqueId("if-range");
    const oldBytes = bytesOf(4000, 1);
    const oldTag = await completedWith(sid, oldBytes);
    expect(await read(outputPath(sid), { range: "bytes=0-999" })).toEqual(
      await ranged(oldBytes, 0, 999),
    );
    // The same handle in a new lifetime names other bytes.
    expect((await api.call("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    const newBytes = bytesOf(4000, 2);
    const newTag = await completedWith(sid, newBytes);
    expect(newTag).not.toBe(oldTag);
    const resumed = { range: "bytes=1000-", "if-range": oldTag };
    expect(await read(outputPath(sid), resumed)).toEqual(await whole(newBytes));
    // The current ETag resumes the range.
    const current = { range: "bytes=1000-", "if-range": newTag };
    expect(await read(outputPath(sid), current)).toEqual(await ranged(newBytes, 1000, 3999));
  });

  it("a weak ETag, an HTTP-date or anything else never matches: the whole output, even for a range past its end", async () => {
    const sid = api.uniqueId("if-range-no");
    const bytes = bytesOf(300, 3);
    const tag = await completedWith(sid, bytes);
    const all = await whole(bytes);
    for (const ifRange of [`W/${tag}`, "Tue, 01 Dec 2026 10:00:00 GMT", "nonsense", `${tag}x`]) {
      expect(await read(outputPath(sid), { range: "bytes=10-19", "if-range": ifRange })).toEqual(
        all,
      );
      expect(await read(outputPath(sid), { range: "bytes=300-", "if-range": ifRange })).toEqual(
        all,
      );
    }
    // Without a Range, If-Range is ignored.
    expect(await read(outputPath(sid), { "if-range": "nonsense" })).toEqual(all);
  });

  it("the operator's route and the console pass If-Range on", async () => {
    const sid = api.uniqueId("if-range-ops");
    const bytes = bytesOf(500, 4);
    const tag = await completedWith(sid, bytes);
    const opsPath = `/v1/ops/sessions/default/${sid}/exec-jobs/h1/output`;
    const stale = { range: "bytes=100-", "if-range": '"0000"' };
    const matching = { range: "bytes=100-", "if-range": tag };
    expect(await read(opsPath, stale, OPERATOR_TOKEN)).toEqual(await whole(bytes));
    expect(await read(opsPath, matching, OPERATOR_TOKEN)).toEqual(await ranged(bytes, 100, 499));
    const cookie = await signedInCookie();
    const consolePath = `/console/sessions/default/${sid}/jobs/h1/output`;
    expect(await seen(await getPage(consolePath, cookie, stale))).toEqual(await whole(bytes));
    expect(await seen(await getPage(consolePath, cookie, matching))).toEqual(
      await ranged(bytes, 100, 499),
    );
  });

  it("the client's ranged read sends the ETag it was given as If-Range", async () => {
    const sid = api.uniqueId("if-range-client");
    const bytes = bytesOf(800, 5);
    const tag = await completedWith(sid, bytes);
    const client = api.client();
    const stale = { offset: 200, length: 100, etag: '"0000"' };
    expect(await seen(await client.readFullOutput(sid, "h1", stale))).toEqual(await whole(bytes));
    const current = { offset: 200, length: 100, etag: tag };
    expect(await seen(await client.readFullOutput(sid, "h1", current))).toEqual(
      await ranged(bytes, 200, 299),
    );
  });
});
