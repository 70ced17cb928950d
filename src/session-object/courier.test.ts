import { describe, expect, it } from "vitest";
import type { Effect, ResumePayload } from "../domain/decision";
import type { Env } from "../env";
import { Courier } from "./courier";

const payload: ResumePayload = {
  type: "session.resume",
  tenant: "default",
  session_id: "s",
  lifetime: "lt_1",
  resume_id: "rs_1",
  reason: "background_exec_completed",
  inbox: { pending: 1 },
};
const post: Effect = {
  type: "deliver_resume",
  url: "https://host.test/resume",
  payload,
  attempt: 2,
};
const wake: Effect = { type: "wake_binding", binding: "AGENT", payload, attempt: 1 };

describe("the courier of one delivery", () => {
  it("counts an attempt on the wire from its start until it settles, a thrown one too, and bounds when it ends", async () => {
    const courier = new Courier({} as Env, "whsec_c2VjcmV0");
    let finish: (() => void) | undefined;
    courier.post = () =>
      new Promise((resolve) => {
        finish = () => resolve({ delivered: true, status: 204 });
      });
    const started = Date.now();
    const sent = courier.send(post);
    expect(courier.postOnWire).toBe(true);
    expect(courier.wireUntil).toBeGreaterThanOrEqual(started + 10_000);
    finish?.();
    const { outcome, event } = await sent;
    expect(courier.postOnWire).toBe(false);
    expect(outcome).toEqual({ delivered: true, status: 204 });
    expect(event).toMatchObject({
      type: "delivery",
      resume_id: "rs_1",
      attempt: 2,
      status: 204,
      error: null,
    });
    expect(event).not.toHaveProperty("binding");

    courier.post = () => Promise.reject(new Error("injected"));
    await expect(courier.send(post)).rejects.toThrow("injected");
    expect(courier.postOnWire).toBe(false);
  });

  it("a wake through a binding this deployment lacks is a failed attempt, recorded with its binding", async () => {
    const courier = new Courier({} as Env, null);
    const { outcome, event } = await courier.send(wake);
    expect(outcome.delivered).toBe(false);
    expect(event).toMatchObject({
      type: "delivery",
      attempt: 1,
      status: null,
      binding: "AGENT",
      error: "this deployment binds no service with wake() named AGENT",
    });
  });
});
