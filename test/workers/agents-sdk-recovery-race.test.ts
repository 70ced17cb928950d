// The Agents SDK agent's recoverToolCalls beside a turn: it awaits exec-inbox once per open call,
// and a prompt stored meanwhile must stay in the conversation it writes back.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as api from "../support/api";

type Message = { role: string; content: unknown };
const agent = (sid: string, what: string, body?: unknown) =>
  env.SHELL_AGENT_HTTP.fetch(`http://agent/agents/${sid}/${what}`, {
    method: body === undefined && what === "transcript" ? "GET" : "POST",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const transcript = async (sid: string) =>
  ((await (await agent(sid, "transcript")).json()) as { messages: Message[] }).messages;
const textOf = (message: Message): string =>
  typeof message.content === "string" ? message.content : JSON.stringify(message.content);

describe("the Agents SDK agent's recoverToolCalls beside a turn", () => {
  it("a human message answered while recoverToolCalls reads exec-inbox stays in the conversation", async () => {
    const sid = api.uniqueId("sdk-race");
    await api.call("POST", "/v1/sessions", {
      body: { id: sid, resume_binding: "SHELL_AGENT_WAKE" },
    });
    const lines = Array.from({ length: 20 }, (_, i) => `run: job ${i}`).join("\n");
    expect((await agent(sid, "prompt", { text: lines })).status).toBe(200);
    expect((await agent(sid, "compact")).status).toBe(200);

    const [recovered, answered] = await Promise.all([
      agent(sid, "recover"),
      agent(sid, "prompt", { text: "hello while recovering" }),
    ]);
    expect(recovered.status).toBe(200);
    expect(answered.status).toBe(200);
    const messages = await transcript(sid);
    // The human's message once (the model's answer quotes it too).
    expect(
      messages.filter(
        (message) => message.role === "user" && textOf(message) === "hello while recovering",
      ),
    ).toHaveLength(1);
    // Every call the compaction left open got its result, exactly once.
    const calls = messages.flatMap((message) =>
      message.role === "assistant" && Array.isArray(message.content)
        ? (message.content as Array<{ type: string; toolCallId?: string }>)
            .filter((part) => part.type === "tool-call")
            .map((part) => part.toolCallId)
        : [],
    );
    const results = messages.flatMap((message) =>
      message.role === "tool" && Array.isArray(message.content)
        ? (message.content as Array<{ toolCallId?: string }>).map((part) => part.toolCallId)
        : [],
    );
    expect(calls.length).toBeGreaterThan(0);
    expect([...results].sort()).toEqual([...calls].sort());
  }, 60_000);
});
