// The example agent host under a hostile caller: replayed signed
// resumes, resumes of another tenant, bodies too large or too deep. Real wrangler dev, real runner.

import { MAX_RESUME_BODY_BYTES } from "@exec-inbox/ai-sdk/bounded-body";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { depthDetail, MAX_JSON_DEPTH } from "../../shared/json-depth";
import { afterFirstCycle } from "../support/e2e-arrange";
import {
  type AgentStack,
  type HostInstance,
  postSignedResume,
  startAgentStack,
} from "./agent-stack";
import { type FaultProxy, startFaultProxy } from "./fault-proxy";

let stack: AgentStack;
let inboxProxy: FaultProxy;
let agent: HostInstance;

beforeAll(async () => {
  stack = await startAgentStack();
  inboxProxy = await startFaultProxy(stack.dev.base);
  agent = await stack.startHost({ execInboxUrl: inboxProxy.base });
}, 90_000);
afterAll(async () => {
  await stack?.close();
  await inboxProxy?.close();
});

const deliveriesOf = (sid: string) =>
  agent.host.kit.deliveries.filter((delivery) => delivery.sessionId === sid);

/** A resume body exec-inbox would send for `sid`, with `overrides`. */
const resumeBody = (fields: Record<string, unknown>) =>
  JSON.stringify({
    type: "session.resume",
    tenant: "default",
    reason: "background_exec_completed",
    inbox: { pending: 1 },
    ...fields,
  });

const postSigned = (resumeId: string, body: string) =>
  postSignedResume(agent.host.url, resumeId, body);

const registrationsOf = (sid: string) =>
  inboxProxy.seen.filter((r) => r.method === "POST" && r.path === `/v1/sessions/${sid}/runs`)
    .length;

describe("the example agent host under a hostile caller", () => {
  it("a signed resume replayed 40 times after its run finished does nothing: no registration, no audit event", async () => {
    const sid = "hostile-replay";
    await afterFirstCycle(agent, sid, "replayed");
    const [delivery] = deliveriesOf(sid);
    const { lifetime } = await stack.inbox.getSession(sid);
    const registrations = registrationsOf(sid);
    const trail = await stack.events(sid);
    const body = resumeBody({ session_id: sid, lifetime, resume_id: delivery!.resumeId });
    // One at a time, each finding no run active, then a burst.
    const statuses: number[] = [];
    for (let replay = 0; replay < 20; replay++) {
      statuses.push((await postSigned(delivery!.resumeId, body)).status);
      await agent.host.kit.settled(sid);
    }
    const burst = await Promise.all(
      Array.from({ length: 20 }, () => postSigned(delivery!.resumeId, body)),
    );
    statuses.push(...burst.map((answer) => answer.status));
    expect(statuses).toEqual(Array(40).fill(200));
    await agent.host.kit.settled(sid);
    expect(registrationsOf(sid)).toBe(registrations);
    expect(await stack.events(sid)).toEqual(trail);
    expect(await stack.inbox.getSession(sid)).toMatchObject({ status: "idle", run: null });
  });

  it("a signed resume of another tenant is refused with 404 and nothing is stored or registered", async () => {
    const sid = "hostile-tenant";
    await agent.host.kit.createSession(sid);
    const { lifetime } = await stack.inbox.getSession(sid);
    const resumeId = "rs_othertenant000000000000000000";
    const body = resumeBody({ tenant: "acme", session_id: sid, lifetime, resume_id: resumeId });
    const answer = await postSigned(resumeId, body);
    expect(answer.status).toBe(404);
    await agent.host.kit.settled(sid);
    expect(registrationsOf(sid)).toBe(0);
    const record = await agent.host.kit.conversation(sid);
    expect([record?.resumes, record?.pendingResume, record?.activeRun]).toEqual([[], null, null]);
  });

  it("a resume body past its cap is refused with 413 while it streams, and the host keeps answering", async () => {
    let sent = 0;
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    // 480 MiB if the host read it all; it stops pulling soon after the cap.
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += chunk.byteLength;
        if (sent > 480 * 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const answer = await fetch(`${agent.host.url}/resume`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(answer.status).toBe(413);
    expect(await answer.json()).toEqual({
      error: `request body is larger than ${MAX_RESUME_BODY_BYTES} bytes`,
    });
    expect(sent).toBeLessThan(16 * 1024 * 1024);
    const declared = await fetch(`${agent.host.url}/resume`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: " ".repeat(MAX_RESUME_BODY_BYTES + 1),
    });
    expect(declared.status).toBe(413);
    expect((await fetch(`${agent.host.url}/healthz`)).status).toBe(200);
  });

  it("JSON nested past the limit is a 422 naming it, on /resume and on the host's own routes", async () => {
    const deep = `${"[".repeat(3_000)}${"]".repeat(3_000)}`;
    const resume = await postSigned("rs_deep", `{"deep":${deep}}`);
    expect(resume.status).toBe(422);
    expect(await resume.json()).toEqual({ error: depthDetail(8 + MAX_JSON_DEPTH - 1) });
    const created = await fetch(`${agent.host.url}/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"id":"hostile-deep","extra":${deep}}`,
    });
    expect(created.status).toBe(422);
    expect(await agent.host.kit.conversation("hostile-deep")).toBeUndefined();
  });
});
