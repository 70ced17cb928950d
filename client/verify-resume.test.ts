import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { SIGNING_SECRET } from "../test/support/secrets";
import { verifyResume } from "./index";

const payload = {
  type: "session.resume",
  tenant: "default",
  session_id: "s1",
  lifetime: "L1",
  resume_id: "r1",
  reason: "background_exec_completed",
  inbox: { pending: 1 },
};

/** A webhook request signed with the test secret, as the server sends it. */
function signed(body: unknown): Request {
  const text = JSON.stringify(body);
  const at = new Date();
  return new Request("http://host.test/resume", {
    method: "POST",
    body: text,
    headers: {
      "content-type": "application/json",
      "webhook-id": "r1",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(SIGNING_SECRET).sign("r1", at, text),
    },
  });
}

describe("verifyResume", () => {
  it("returns a signed resume payload", async () => {
    expect(await verifyResume(signed(payload), SIGNING_SECRET)).toEqual(payload);
  });

  it("refuses a signed body that is not a resume payload", async () => {
    await expect(
      verifyResume(signed({ ...payload, reason: "nope" }), SIGNING_SECRET),
    ).rejects.toThrow(/reason/);
    const { session_id: _, ...withoutSession } = payload;
    await expect(verifyResume(signed(withoutSession), SIGNING_SECRET)).rejects.toThrow(
      /session_id/,
    );
  });

  it("drops a top-level field a newer server may add", async () => {
    expect(await verifyResume(signed({ ...payload, added: 1 }), SIGNING_SECRET)).toEqual(payload);
  });

  it("refuses a body signed with another secret", async () => {
    const request = signed(payload);
    await expect(
      verifyResume(request, "whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldC1vdGhlcg=="),
    ).rejects.toThrow();
  });
});
