// A part re-sent many times with other bytes: each re-send lands under its own key, and
// the completion's check must still find every part it names, however many keys the job holds.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { jobPrefix, partKey } from "../../src/domain/full-output";
import * as api from "../support/api";
import { bytesOf, sha256, upload } from "../support/full-output";

/** Past the old check's bound: it listed at most 8 pages of 1,000 keys under the job's prefix. */
const RESENDS = 8_001;
const AT_ONCE = 500;

/** Re-send `i` of part 0: four bytes of its own, so each lands under another key. */
const resend = (i: number) =>
  new Uint8Array([i >>> 24, (i >>> 16) & 255, (i >>> 8) & 255, i & 255]);

describe("a completion's parts check holds however often a part was re-sent", () => {
  it(`part 0 re-sent ${RESENDS} times with other bytes does not hide an uploaded part 1, and a part never uploaded is still named`, async () => {
    const sid = api.uniqueId("resends");
    await api.createSession(sid);
    const token = (await api.reserve(sid, "h1")).callback.token;
    const tail = bytesOf(100, 9);
    expect((await upload(sid, "h1", token, 1, tail)).status).toBe(201);
    // A few re-sends through the route; the rest are put straight into the pool's bucket under the
    // key and with the bytes the route stores (a route upload costs ~15 ms here, 8,100 of them 2 min).
    for (const i of [0, 1, 2])
      expect((await upload(sid, "h1", token, 0, resend(i))).status).toBe(201);
    const { lifetime } = await api.view(sid);
    const prefix = jobPrefix({ tenant: "default", sessionId: sid, lifetime, handle: "h1", seq: 1 });
    for (let first = 3; first < RESENDS; first += AT_ONCE) {
      const batch = Array.from({ length: Math.min(AT_ONCE, RESENDS - first) }, (_, i) => first + i);
      await Promise.all(
        batch.map(async (i) => {
          const bytes = resend(i);
          const hash = await sha256(bytes);
          await env.OUTPUTS.put(partKey(prefix, 0, hash), bytes, { sha256: hash });
        }),
      );
    }
    const routeKey = partKey(prefix, 0, await sha256(resend(2)));
    expect(await env.OUTPUTS.head(routeKey)).not.toBeNull();
    const listed = await env.OUTPUTS.list({ prefix: `outputs/default/${sid}/`, limit: 1 });
    expect(listed.truncated).toBe(true);
    const head = resend(RESENDS - 1);
    const parts = [
      { bytes: head.byteLength, sha256: await sha256(head) },
      { bytes: tail.byteLength, sha256: await sha256(tail) },
    ];
    const whole = new Uint8Array([...head, ...tail]);
    const fullOutput = { bytes: whole.byteLength, sha256: await sha256(whole), parts };
    const complete = (named: unknown) =>
      api.complete(sid, "h1", token, api.result(0, "t", { full_output: named }));
    // A part 0 never uploaded is named missing, and only it.
    const never = new Uint8Array([255, 255, 255, 255]);
    const wrongHead = { bytes: 4, sha256: await sha256(never) };
    const refused = await complete({ ...fullOutput, parts: [wrongHead, parts[1]] });
    expect([refused.status, refused.body.code, refused.body.errors]).toEqual([
      409,
      "output_incomplete",
      [{ path: "full_output.parts.0", message: expect.stringContaining("not uploaded") }],
    ]);
    const accepted = await complete(fullOutput);
    expect([accepted.status, accepted.body]).toEqual([202, expect.anything()]);
    const read = await api.workerFetch(
      new Request(`http://exec-inbox.test/v1/sessions/${sid}/exec-jobs/h1/output`, {
        headers: { authorization: `Bearer ${api.AGENT_TOKEN}` },
      }),
    );
    expect(new Uint8Array(await read.arrayBuffer())).toEqual(whole);
  }, 120_000);
});
