// A redelivery that falls due while an agent's request is being answered: its webhook counts the
// claimable items as they are after that request.

import { verifyResume } from "@exec-inbox/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as api from "../support/api";

const CLAIM_TIMEOUT_MS = 600_000; // the default RESUME_CLAIM_TIMEOUT_MS

afterEach(() => {
  vi.useRealTimers();
});

describe("a claim-timeout redelivery that falls due as an ack lands", () => {
  it("carries the number of claimable items after the ack, never a negative one", async () => {
    const sid = api.uniqueId("late-ack");
    const { tokens } = await api.suspendedOn(sid, ["h1"]);
    expect((await api.complete(sid, "h1", tokens.h1!, api.result(0, "x"))).status).toBe(202);
    await vi.waitFor(async () => expect((await api.view(sid)).resume.state).toBe("delivered"));
    // The host claims without registering a run, with a lease longer than the claim timeout ...
    const claimed = await api.claim(sid, { lease_ms: 3_600_000 });
    const id = claimed.body.claims[0].envelope.id;
    // ... and acks after the claim timeout, before the alarm has run (a late alarm).
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + CLAIM_TIMEOUT_MS + 1_000);
    expect(
      (await api.call("POST", `/v1/sessions/${sid}/inbox/ack`, { body: { ids: [id] } })).status,
    ).toBe(200);
    await vi.waitFor(async () => expect(await api.deliveries(sid)).toHaveLength(2));
    const sent = (await api.deliveries(sid))[1]!;
    expect((await api.view(sid)).inbox.pending).toBe(0);
    const incoming = new Request("http://host.test/hook", {
      method: "POST",
      headers: sent.headers,
      body: sent.body,
    });
    await expect(verifyResume(incoming, api.SIGNING_SECRET)).resolves.toMatchObject({
      inbox: { pending: 0 },
      resume_id: (await api.view(sid)).resume.resume_id,
    });
  });
});
