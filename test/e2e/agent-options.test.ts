// The kit refuses settings exec-inbox would refuse later, when it is made, not at the first command.

import { AgentKit } from "@exec-inbox/ai-sdk/agent-kit";
import type { ConversationStore } from "@exec-inbox/ai-sdk/conversation-store";
import { RunnerClient } from "@exec-inbox/ai-sdk/runner-client";
import { ExecInboxClient } from "@exec-inbox/client";
import { describe, expect, it } from "vitest";

/** No test here gets as far as the store: constructing the kit is what is under test. */
const unusedStore: ConversationStore = {
  load: () => Promise.reject(new Error("no store in this test")),
  save: () => Promise.reject(new Error("no store in this test")),
  delete: () => Promise.reject(new Error("no store in this test")),
  list: () => Promise.reject(new Error("no store in this test")),
};

const options = {
  inbox: new ExecInboxClient({ baseUrl: "http://127.0.0.1:1", token: "t" }),
  runner: new RunnerClient({ baseUrl: "http://127.0.0.1:1", token: "t" }),
  store: unusedStore,
  model: () => {
    throw new Error("no model in this test");
  },
  resumeSigningSecret: "whsec_dGVzdA==",
  resumeUrl: "http://127.0.0.1:1/resume",
};

describe("the kit's heartbeatTimeoutMs", () => {
  it("outside 5,000–86,400,000 ms, or not a number (a typo in an environment variable), the kit refuses to start", () => {
    for (const bad of [1_000, 86_400_001, 1.5, Number.NaN]) {
      expect(() => new AgentKit({ ...options, heartbeatTimeoutMs: bad })).toThrow(RangeError);
    }
    expect(() => new AgentKit({ ...options, heartbeatTimeoutMs: 60_000 })).not.toThrow();
    expect(() => new AgentKit(options)).not.toThrow();
  });
});

describe("the kit's model turn", () => {
  it("given both an AI SDK model and a turn engine, or neither (a JavaScript caller), the kit refuses to start", () => {
    const turn = async () => ({ messages: [], text: "" });
    expect(() => new AgentKit({ ...options, turn } as never)).toThrow(/either an AI SDK model/);
    const { model: _, ...neither } = options;
    expect(() => new AgentKit(neither as never)).toThrow(/needs a model/);
    const { model: __, ...settings } = options;
    expect(() => new AgentKit({ ...settings, turn })).not.toThrow();
  });
});
