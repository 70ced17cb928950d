import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  call,
  claim,
  complete,
  registerRun,
  reserve,
  result,
  suspendedOn,
  uniqueId,
  view,
} from "../support/api";

describe("serialization of human appends and completions", () => {
  it("300 concurrent appends and completions lose and double nothing, and the view equals a reload", async () => {
    const sid = uniqueId("storm");
    const handles = Array.from({ length: 75 }, (_, i) => `job-${i}`);
    const { tokens } = await suspendedOn(sid, ["anchor"]);
    for (const handle of handles) tokens[handle] = (await reserve(sid, handle)).callback.token;
    await registerRun(sid);

    const appends = Array.from({ length: 150 }, (_, i) =>
      call("POST", `/v1/sessions/${sid}/messages`, {
        body: { role: "user", content: `message ${i}` },
      }),
    );
    // Every completion is sent twice at once: the second must be a duplicate, never a second item.
    const completions = handles.flatMap((handle) => [
      complete(sid, handle, tokens[handle]!, result(0, `out ${handle}`)),
      complete(sid, handle, tokens[handle]!, result(0, `out ${handle}`)),
    ]);
    const answers = await Promise.all([...appends, ...completions]);

    const appended = answers.slice(0, 150);
    expect(appended.every((answer) => answer.status === 201)).toBe(true);
    expect(new Set(appended.map((answer) => answer.body.index)).size).toBe(150);
    const outcomes = answers.slice(150).map((answer) => answer.body.outcome);
    expect(outcomes.filter((outcome) => outcome === "accepted")).toHaveLength(75);
    expect(outcomes.filter((outcome) => outcome === "duplicate")).toHaveLength(75);

    const live = await view(sid);
    const stored = (await call("GET", `/v1/sessions/${sid}/messages?limit=500`)).body.messages;
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

    const claimed = await claim(sid, { max: 128 });
    const generations = claimed.body.claims.map((entry: any) => entry.envelope.generation);
    expect(generations).toEqual(Array.from({ length: 75 }, (_, i) => i + 1));
    expect(
      new Set(claimed.body.claims.map((entry: any) => entry.envelope.correlation_id)).size,
    ).toBe(75);

    const beforeReload = await view(sid);
    const jobsBefore = (await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body;
    await abortAllDurableObjects();
    expect(await view(sid)).toEqual(beforeReload);
    expect((await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body).toEqual(jobsBefore);
  }, 60_000);

  // Restarts every object at each step: slow on a loaded machine, so it gets more than 5 s.
  it("every step of a wake leaves a view equal to what a restarted object reloads", {
    timeout: 30_000,
  }, async () => {
    const sid = uniqueId("reload-steps");
    const { tokens } = await suspendedOn(sid, ["a", "b"], { wake: "any" });
    const steps: Array<() => Promise<unknown>> = [
      () => complete(sid, "a", tokens.a!, result(1, "first")),
      () => complete(sid, "b", tokens.b!, result(2, "second")),
      () => claim(sid, { max: 1 }),
      () => registerRun(sid),
      () =>
        call("POST", `/v1/sessions/${sid}/messages`, {
          body: { role: "assistant", content: [{ type: "text" }] },
        }),
    ];
    for (const step of steps) {
      await step();
      const live = await view(sid);
      await abortAllDurableObjects();
      expect(await view(sid)).toEqual(live);
    }
  });
});
