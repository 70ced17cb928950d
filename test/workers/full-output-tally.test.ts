import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { mintCallbackToken } from "../../src/auth/callback-token";
import * as api from "../support/api";
import { bytesOf, sha256, upload } from "../support/full-output";
import { CALLBACK_SECRET_NEW } from "../support/secrets";

async function uploaded(sid: string) {
  await api.createSession(sid);
  const token = (await api.reserve(sid, "h1")).callback.token;
  const parts = [bytesOf(3000, 1), bytesOf(1234, 2)];
  for (const [index, bytes] of parts.entries())
    expect((await upload(sid, "h1", token, index, bytes)).status).toBe(201);
  const whole = new Uint8Array([...parts[0]!, ...parts[1]!]);
  const fullOutput = {
    bytes: whole.byteLength,
    sha256: await sha256(whole),
    parts: await Promise.all(
      parts.map(async (b) => ({ bytes: b.byteLength, sha256: await sha256(b) })),
    ),
  };
  return { token, whole, fullOutput, parts };
}
const completeWith = (sid: string, token: string, fullOutput: unknown) =>
  api.complete(sid, "h1", token, api.result(0, "tail", { full_output: fullOutput }));
describe("full-output tally and limits", () => {
  it("a session's full outputs stop at 4 GiB by default: the part that would pass it gets 413 and is not stored", async () => {
    // The attack: one session, 4 running jobs, parts as fast as they go (192 MiB in 7.7 s).
    const sid = api.uniqueId("session-bytes");
    await api.createSession(sid);
    const handles = ["h1", "h2", "h3", "h4"];
    const tokens: string[] = [];
    for (const handle of handles) {
      const token = (await api.reserve(sid, handle)).callback.token;
      tokens.push(token);
      expect((await upload(sid, handle, token, 0, bytesOf(1000, 1))).status).toBe(201);
    }
    // As if each job had uploaded just under 1 GiB: the session holds 4 GiB less 1,000 bytes.
    const perJob = 1024 * 1024 * 1024 - 250;
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE outputs SET uploaded_bytes = ?", perJob);
    });
    const over = await upload(sid, "h4", tokens[3]!, 1, bytesOf(2000, 2));
    expect([over.status, over.body.code]).toEqual([413, "payload_too_large"]);
    expect(over.body.detail).toContain("(full_output_bytes)");
    const stored = await env.OUTPUTS.list({ prefix: `outputs/default/${sid}/` });
    expect(stored.objects).toHaveLength(4);
    // Nothing of the refused part was counted: what still fits is taken, to the byte.
    expect((await upload(sid, "h4", tokens[3]!, 1, bytesOf(1000, 3))).status).toBe(201);
    const full = await upload(sid, "h1", tokens[0]!, 1, bytesOf(1, 4));
    expect([full.status, full.body.code]).toEqual([413, "payload_too_large"]);
  });

  it("a part whose put fails its digest does not count against the job's upload tally", async () => {
    const sid = api.uniqueId("tally");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    const good = bytesOf(5000, 1);
    expect((await upload(sid, "h1", token, 0, good)).status).toBe(201);
    // Near the bound (2 x 1 GiB): as if the job had retried many parts.
    const limit = 2 * 1024 * 1024 * 1024;
    await runInDurableObject(api.stubOf(sid), (_, state) => {
      state.storage.sql.exec("UPDATE outputs SET uploaded_bytes = ?", limit - 6000);
    });
    const bad = await upload(sid, "h1", token, 1, bytesOf(5000, 2), await sha256(bytesOf(5000, 3)));
    expect(bad.body.code).toBe("digest_mismatch");
    // Nothing was stored by the failed put: the next good part fits.
    const next = await upload(sid, "h1", token, 1, bytesOf(5000, 2));
    expect([next.status, next.body.code]).toEqual([201, undefined]);
    // And the bound still holds past it.
    const over = await upload(sid, "h1", token, 2, bytesOf(5000, 4));
    expect([over.status, over.body.code]).toEqual([413, "payload_too_large"]);
  });

  it("a full output over MAX_FULL_OUTPUT_BYTES: 413 naming full_output.bytes, told from the body's", async () => {
    const sid = api.uniqueId("fullmax");
    const { token } = await uploaded(sid);
    const part = { bytes: 64 * 1024 * 1024, sha256: "a".repeat(64) };
    const parts = Array.from({ length: 17 }, () => part);
    const refused = await completeWith(sid, token, {
      bytes: 17 * part.bytes,
      sha256: "b".repeat(64),
      parts,
    });
    expect([refused.status, refused.body.code]).toEqual([413, "payload_too_large"]);
    expect(refused.body.errors?.[0]?.path).toBe("full_output.bytes");
  });
});

const readRaw = async (sid: string, range?: string, method = "GET") => {
  const response = await api.workerFetch(
    new Request(`http://exec-inbox.test/v1/sessions/${sid}/exec-jobs/h1/output`, {
      method,
      headers: {
        authorization: `Bearer ${api.AGENT_TOKEN}`,
        ...(range === undefined ? {} : { range }),
      },
    }),
  );
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
};

describe("full-output reads and legacy tokens", () => {
  it("HEAD answers the status, ETag and length, with no body", async () => {
    const sid = api.uniqueId("head");
    const { token, whole, fullOutput } = await uploaded(sid);
    await completeWith(sid, token, fullOutput);
    const head = await readRaw(sid, undefined, "HEAD");
    expect(head.response.status).toBe(200);
    expect(head.response.headers.get("etag")).toBe(`"${fullOutput.sha256}"`);
    expect(head.response.headers.get("content-length")).toBe(String(whole.byteLength));
    expect(head.bytes.byteLength).toBe(0);
    const ranged = await readRaw(sid, "bytes=10-19", "HEAD");
    expect(ranged.response.status).toBe(206);
    expect(ranged.response.headers.get("content-length")).toBe("10");
    expect(ranged.response.headers.get("content-range")).toBe(`bytes 10-19/${whole.byteLength}`);
  });

  it("the range unit is case-insensitive", async () => {
    const sid = api.uniqueId("unit");
    const { token, whole, fullOutput } = await uploaded(sid);
    await completeWith(sid, token, fullOutput);
    const read = await readRaw(sid, "Bytes=0-9");
    expect(read.response.status).toBe(206);
    expect(read.bytes).toEqual(whole.subarray(0, 10));
  });

  it("a part uploaded with a legacy token (no reservation seq): 422, as its completion", async () => {
    const sid = api.uniqueId("legacy");
    const created = await api.createSession(sid);
    await api.reserve(sid, "h1");
    const legacy = mintCallbackToken(CALLBACK_SECRET_NEW, {
      tenant: "default",
      sessionId: sid,
      lifetime: created.lifetime,
      handle: "h1",
      seq: null,
    });
    const refused = await upload(sid, "h1", legacy, 0, bytesOf(100, 1));
    expect([refused.status, refused.body.code]).toEqual([422, "invalid_request"]);
    expect(refused.body.detail).toMatch(/reserve the job again/);
  });
});
