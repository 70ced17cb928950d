// A session as a Cloudflare user would build it with Workflows: create an instance, let it wait in
// step.waitForEvent, wake it with instance.sendEvent. Each resume POSTs to `notify` (the host).
import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";

interface Env {
  WAITER: Workflow<Params>;
}

interface Params {
  /** Where each resumed step reports `{id, wait, payload}`. */
  notify: string;
  /** A step.sleep before the wait: an event sent meanwhile arrives before the wait is reached. */
  delayMs?: number;
  /** A second wait for the same event type, bounded: does a duplicate event reach it? */
  secondWaitMs?: number;
}

export class Waiter extends WorkflowEntrypoint<Env, Params> {
  override async run(event: WorkflowEvent<Params>, step: WorkflowStep): Promise<unknown> {
    const { notify, delayMs, secondWaitMs } = event.payload;
    const report = (wait: string, payload: unknown) =>
      step.do(`resumed ${wait}`, async () => {
        const response = await fetch(notify, {
          method: "POST",
          body: JSON.stringify({ id: event.instanceId, wait, payload }),
        });
        await response.arrayBuffer();
        return null;
      });
    if (delayMs) await step.sleep("before the wait", delayMs);
    const first = await step.waitForEvent("result", { type: "result", timeout: "1 hour" });
    await report("first", first.payload);
    if (secondWaitMs) {
      try {
        const second = await step.waitForEvent("second", {
          type: "result",
          timeout: secondWaitMs,
        });
        await report("second", second.payload);
      } catch {
        await report("second", "timed out");
      }
    }
    return first.payload;
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const id = url.searchParams.get("id") ?? "";
    try {
      switch (url.pathname) {
        case "/noop":
          return Response.json({ ok: true });
        case "/start": {
          await env.WAITER.create({ id, params: (await request.json()) as Params });
          return Response.json({ id }, { status: 201 });
        }
        case "/send": {
          const instance = await env.WAITER.get(id);
          await instance.sendEvent({ type: "result", payload: await request.json() });
          return Response.json({ ok: true }, { status: 202 });
        }
        case "/status":
          return Response.json(await (await env.WAITER.get(id)).status());
        case "/restart":
          await (await env.WAITER.get(id)).restart();
          return Response.json({ ok: true });
        default:
          return new Response("no such route", { status: 404 });
      }
    } catch (error) {
      return Response.json({ error: String(error) }, { status: 500 });
    }
  },
} satisfies ExportedHandler<Env>;
