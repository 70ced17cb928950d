import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

describe("serialization of human appends and completions", () => {
  it("300 concurrent appends and completions lose and double nothing, and the view equals a reload", async () => {
    const sid = api.uniqueId("storm");
    const handles = Array.from({ length: 75 }, (_, i) => `job-${i}`);
    const { tokens } = await api.suspendedOn(sid, ["anchor"]);
    for (const handle of handles) tokens[handle] = (await api.reserve(sid, handle)).callback.token;
    await api.registerRun(sid);

    const appends = Array.from({ length: 150 }, (_, i) =>
      api.call("POST", `/v1/sessions/${sid}/messages`, {
        body: { role: "user", content: `message ${i}` },
      }),
    );
    // Every completion is sent twice at once: the second must be a duplicate, never a second item.
    const completions = handles.flatMap((handle) => [
      api.complete(sid, handle, tokens[handle]!, api.result(0, `out ${handle}`)),
      api.complete(sid, handle, tokens[handle]!, api.result(0, `out ${handle}`)),
    ]);
    const answers = await Promise.all([...appends, ...completions]);

    const appended = answers.slice(0, 150);
    expect(appended.every((answer) => answer.status === 201)).toBe(true);
    expect(new Set(appended.map((answer) => answer.body.index)).size).toBe(150);
    const outcomes = answers.slice(150).map((answer) => answer.body.outcome);
    expect(outcomes.filter((outcome) => outcome === "accepted")).toHaveLength(75);
    expect(outcomes.filter((outcome) => outcome === "duplicate")).toHaveLength(75);

    const live = await api.view(sid);
    const stored = (await api.call("GET", `/v1/sessions/${sid}/messages?limit=500`)).body.messages;
    expect(stored.map((message: { content: string }) => message.content).sort()).toEqual(
      Array.from({ length: 150 }, (_, i) => `message ${i}`).sort(),
    );
    expect(stored.map((message: { index: number }) => message.index)).toEqual(
      Array.from({ length: 150 }, (_, i) => i),
    );
    expect(live.message_count).toBe(150);
    expect(live.inbox).toEqual({ pending: 75, claimed: 0, generation: 75 });
    expect(live.notify_seq).toBe(75);
    expect(live.waiting_for_bash.handles).toEqual(["anchor"]);

    const claimed = await api.claim(sid, { max: 128 });
    const generations = claimed.body.claims.map((entry: any) => entry.envelope.generation);
    expect(generations).toEqual(Array.from({ length: 75 }, (_, i) => i + 1));
    expect(
      new Set(claimed.body.claims.map((entry: any) => entry.envelope.correlation_id)).size,
    ).toBe(75);

    const beforeReload = await api.view(sid);
    const jobsBefore = (await api.call("GET", `/v1/sessions/${sid}/exec-jobs`)).body;
    await abortAllDurableObjects();
    expect(await api.view(sid)).toEqual(beforeReload);
    expect((await api.call("GET", `/v1/sessions/${sid}/exec-jobs`)).body).toEqual(jobsBefore);
  }, 60_000);

  // Restarts every object at each step: slow on a loaded machine, so it gets more than 5 s.
  it("every step of a wake leaves a view equal to what a restarted object reloads", {
    timeout: 30_000,
  }, async () => {
    const sid = api.uniqueId("reload-steps");
    const { tokens } = await api.suspendedOn(sid, ["a", "b"], { wake: "any" });
    const steps: Array<() => Promise<unknown>> = [
      () => api.complete(sid, "a", tokens.a!, api.result(1, "first")),
      () => api.complete(sid, "b", tokens.b!, api.result(2, "second")),
      () => api.claim(sid, { max: 1 }),
      () => api.registerRun(sid),
      () =>
        api.call("POST", `/v1/sessions/${sid}/messages`, {
          body: { role: "assistant", content: [{ type: "text" }] },
        }),
    ];
    for (const step of steps) {
      await step();
      const live = await api.view(sid);
      await abortAllDurableObjects();
      expect(await api.view(sid)).toEqual(live);
    }
  });
});
