// Edges of recovery without re-running (fakes only, no wrangler, no runner): each test states what
// a recovered call must read or what the journal must keep.

import type { SessionRecord, TurnInput } from "@exec-inbox/ai-sdk";
import {
  aiSdkToolCallFormat,
  type ExecToolContext,
  execTools,
  recoverOpenCalls,
  recoverToolCalls,
} from "@exec-inbox/ai-sdk";
import { runTurns } from "@exec-inbox/ai-sdk/run-turns";
import { persistedJournal } from "@exec-inbox/ai-sdk/tool-call-journal";
import { ExecInboxError } from "@exec-inbox/client";
import { openAiToolCallFormat } from "@exec-inbox/openai-agents";
import type { AgentInputItem } from "@openai/agents";
import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";

const notFound = () =>
  new ExecInboxError({
    type: "about:blank",
    title: "not found",
    status: 404,
    code: "not_found",
    detail: "no such job",
  } as never);

const job = (over: Record<string, unknown>) => ({
  handle: "h1",
  command: "x",
  lifetime: "l",
  status: "completed",
  exit_code: 0,
  output: "",
  output_truncated: false,
  output_bytes_total: 0,
  ended_by: "process",
  reserved_at: "",
  completed_at: "",
  heartbeat_timeout_ms: null,
  last_heartbeat_at: null,
  progress: null,
  cancel_requested: false,
  full_output: null,
  ...over,
});

describe("recovery without re-running at its edges", () => {
  it("a call whose handle exec-inbox never took is not told to check it with write_stdin, which refuses that handle", async () => {
    const inbox = {
      getJob: async () => {
        throw notFound();
      },
    } as never;
    const [call] = await recoverToolCalls(inbox, "s1", [
      {
        toolCallId: "c1",
        toolName: "exec_command",
        input: { cmd: "x" },
        handle: "h1",
        answer: null,
      },
    ]);
    const advisesWriteStdin = String(call!.result.note).includes("write_stdin");
    const ctx = {
      sessionId: "s1",
      inbox,
      runner: { writeStdin: async () => ({ output: "should not get here" }) },
      onBackground: () => {},
      onEnded: () => {},
    } as unknown as ExecToolContext;
    const tools = execTools(ctx);
    const refused = await Promise.resolve(
      tools.write_stdin.execute!({ session_id: "h1" } as never, {
        toolCallId: "c2",
        messages: [],
        context: {},
      }),
    ).then(
      () => false,
      (error: unknown) => /no command with session_id h1 in this session/.test(String(error)),
    );
    expect({ advisesWriteStdin, refused }).not.toEqual({ advisesWriteStdin: true, refused: true });
  });

  it("a job that failed to start never reads as having exited with a code", async () => {
    const inbox = {
      getJob: async () => job({ status: "failed", exit_code: null, ended_by: "process" }),
    } as never;
    const [call] = await recoverToolCalls(inbox, "s1", [
      {
        toolCallId: "c1",
        toolName: "exec_command",
        input: { cmd: "x" },
        handle: "h1",
        answer: null,
      },
    ]);
    expect(String(call!.result.note)).not.toMatch(/exited with code null/);
  });

  it("a call recovered after a compaction, with no restart, does not read that the host restarted", async () => {
    const inbox = { getJob: async () => job({}) } as never;
    const [call] = await recoverOpenCalls(
      inbox,
      "s1",
      [{ toolCallId: "c1", toolName: "exec_command", input: { cmd: "x" } }],
      new Map([["c1", ["h1"]]]),
    );
    expect(String(call!.result.note)).not.toContain("The agent host restarted");
  });

  it("two exec_command calls of one turn under the same toolCallId stay two journal entries, each with its own handle or answer", async () => {
    const writes: unknown[] = [];
    const journal = persistedJournal([], async (entries) => {
      writes.push(entries);
    });
    let n = 0;
    const ctx = {
      sessionId: "s1",
      inbox: { reserveJob: async () => ({ callback: { url: "u", token: "t" } }) },
      runner: {
        execCommand: async () => {
          n++;
          return n === 1 ? { session_id: "h1", output: "" } : { exit_code: 0, output: "quick" };
        },
        armCallback: async () => {},
      },
      onBackground: () => {},
      onEnded: () => {},
      journal,
    } as unknown as ExecToolContext;
    const exec = execTools(ctx).exec_command.execute!;
    await exec({ cmd: "sleep 100" } as never, { toolCallId: "call_0", messages: [], context: {} });
    await exec({ cmd: "echo quick" } as never, { toolCallId: "call_0", messages: [], context: {} });
    // Two calls ran; the journal must hold two.
    expect(journal.entries()).toHaveLength(2);
  });

  it("a write_stdin call whose result a compaction dropped is found open, so recovery can close it", () => {
    const messages: ModelMessage[] = [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: "w1",
            toolName: "write_stdin",
            input: { session_id: "h1" },
          },
        ],
      },
    ];
    const open = aiSdkToolCallFormat.openCalls(messages);
    expect(open.map((call) => call.toolCallId)).toEqual(["w1"]);
  });
});

describe("a compaction in a conversation whose model reused a tool call id", () => {
  // Some providers number calls per turn (call_0 in every turn): one id names several calls.
  const call = (toolName: string, input: Record<string, unknown>): ModelMessage => ({
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "call_0", toolName, input }],
  });
  const result = (value: unknown): ModelMessage => ({
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "call_0",
        toolName: "exec_command",
        output: { type: "json", value: value as never },
      },
    ],
  });

  it("a call left without a result is found open though an earlier call under its id has one", () => {
    const messages: ModelMessage[] = [
      { role: "user", content: "go" },
      call("exec_command", { cmd: "echo one" }),
      result({ outcome: "exited with code 0", output: "one" }),
      { role: "user", content: "again" },
      // Its result was dropped by the compaction: a provider refuses the conversation as it is.
      call("exec_command", { cmd: "rm -rf build && make" }),
    ];
    const open = aiSdkToolCallFormat.openCalls(messages);
    expect(open.map((found) => found.input)).toEqual([{ cmd: "rm -rf build && make" }]);
  });

  it("on OpenAI Agents JS too, a call left without a result is found open though an earlier call under its id has one", () => {
    const items: AgentInputItem[] = [
      {
        type: "function_call",
        callId: "call_0",
        name: "exec_command",
        arguments: '{"cmd":"echo one"}',
      },
      {
        type: "function_call_result",
        callId: "call_0",
        name: "exec_command",
        status: "completed",
        output: { type: "text", text: "{}" },
      },
      {
        type: "function_call",
        callId: "call_0",
        name: "exec_command",
        arguments: '{"cmd":"make"}',
      },
    ];
    expect(openAiToolCallFormat.openCalls(items).map((found) => found.input)).toEqual([
      { cmd: "make" },
    ]);
  });

  it("two write_stdin calls under one id each get their own job's truth, never the other's", async () => {
    const jobs: Record<string, unknown> = {
      h1: job({ handle: "h1", output: "first job" }),
      h2: job({ handle: "h2", status: "killed", exit_code: null, output: "second job" }),
    };
    const inbox = {
      getJob: async (_sid: string, handle: string) => jobs[handle],
      getSession: async () => ({ wake: { via: "webhook" } }),
    } as never;
    const messages: ModelMessage[] = [
      { role: "user", content: "go" },
      call("write_stdin", { session_id: "h1" }),
      { role: "user", content: "and the other" },
      call("write_stdin", { session_id: "h2" }),
    ];
    const open = aiSdkToolCallFormat.openCalls(messages);
    const recovered = await recoverOpenCalls(inbox, "s1", open, new Map());
    const closed = aiSdkToolCallFormat.close(messages, recovered);
    const results = closed.flatMap((message) =>
      message.role === "tool"
        ? message.content.flatMap((part) =>
            part.type === "tool-result" && part.output.type === "json"
              ? [(part.output.value as { session_id?: string }).session_id]
              : [],
          )
        : [],
    );
    // The first call asked about h1: it must not read the killed h2's result.
    expect(results).toEqual(["h1", "h2"]);
  });
});

describe("write_stdin in the journal", () => {
  const journaledTools = (writeStdin: (input: unknown) => Promise<unknown>) => {
    const journal = persistedJournal([], async () => {});
    const sent: unknown[] = [];
    const ctx = {
      sessionId: "s1",
      inbox: { getJob: async () => ({ status: "running" }) },
      runner: {
        writeStdin: async (input: unknown) => {
          // What the journal held when the runner was asked: the call, before its characters left.
          sent.push(journal.entries().map((call) => ({ ...call })));
          return writeStdin(input);
        },
      },
      onBackground: () => {},
      onEnded: () => {},
      journal,
    } as unknown as ExecToolContext;
    return { tools: execTools(ctx), journal, sent };
  };
  const options = (toolCallId: string) => ({ toolCallId, messages: [], context: {} });

  it("a write_stdin that sends characters is journaled before they are sent, then with its answer", async () => {
    const { tools, journal, sent } = journaledTools(async () => ({ output: "ok" }));
    await tools.write_stdin.execute!({ session_id: "h1", chars: "y\n" } as never, options("w1"));
    expect(sent).toEqual([
      [
        {
          toolCallId: "w1",
          toolName: "write_stdin",
          input: { session_id: "h1", chars: "y\n" },
          handle: null,
          answer: null,
        },
      ],
    ]);
    expect(journal.entries()).toEqual([
      expect.objectContaining({ toolCallId: "w1", answer: { output: "ok" } }),
    ]);
  });

  it("a write_stdin that only reads is not journaled: reading again changes nothing", async () => {
    const { tools, journal } = journaledTools(async () => ({ output: "ok" }));
    await tools.write_stdin.execute!({ session_id: "h1" } as never, options("w1"));
    await tools.write_stdin.execute!({ session_id: "h1", chars: "" } as never, options("w2"));
    expect(journal.entries()).toEqual([]);
  });

  it("a write_stdin whose runner failed midway stays journaled without an answer, so recovery says it may have been sent", async () => {
    const { tools, journal } = journaledTools(async () => {
      throw new Error("connection reset");
    });
    const failed = await Promise.resolve(
      tools.write_stdin.execute!({ session_id: "h1", chars: "y\n" } as never, options("w1")),
    ).then(
      () => false,
      () => true,
    );
    expect(failed).toBe(true);
    const [call] = await recoverToolCalls({} as never, "s1", journal.entries());
    expect(call!.result.note).toMatch(/possibly sent.*Do not send it again/);
  });
});

describe("calls of a turn whose model failed on every attempt", () => {
  const fakeInbox = {
    claim: async () => ({ claims: [] }),
    ack: async () => ({}),
    getSession: async () => ({ inbox: { claimed: 0 }, waiting_for_bash: null }),
    finishRun: async () => ({}),
  } as never;

  it("go into the stored conversation with their results before the next run's human message", async () => {
    let stored: SessionRecord<ModelMessage> = {
      sessionId: "s1",
      lifetime: "lt",
      messages: [{ role: "user", content: "first" }],
      running: [],
      applied: [],
      resumes: [],
      pendingResume: null,
      activeRun: null,
    };
    const store = {
      save: async (record: SessionRecord<ModelMessage>) => {
        stored = record;
      },
      load: async () => stored,
      delete: async () => {},
      list: async () => ["s1"],
    };
    const seen: Array<{ messages: readonly ModelMessage[]; recovered: number }> = [];
    let failing = true;
    const engine = Object.assign(
      async (input: TurnInput<ModelMessage>) => {
        seen.push({ messages: input.messages, recovered: input.recovered.length });
        if (failing) {
          // The model's exec_command ran and answered; then the provider failed.
          await input.tools.journal?.begin("call_1", { cmd: "echo hi" });
          await input.tools.journal?.answered("call_1", { exit_code: 0, output: "hi" });
          throw new Error("provider down");
        }
        return {
          messages: [...input.messages, { role: "user" as const, content: input.userText ?? "" }],
          text: "ok",
        };
      },
      { toolCallFormat: aiSdkToolCallFormat },
    );
    const options = {
      inbox: fakeInbox,
      runner: {} as never,
      store,
      resumeSigningSecret: "unused",
      resumeUrl: "unused",
      modelAttempts: 1,
      turn: engine,
    };
    const run = (text: string) => ({
      runId: text,
      resumeId: null,
      leaseExpiresAt: 0,
      pendingUserText: text,
    });
    const drive = (text: string) =>
      runTurns(options, { ...stored, activeRun: run(text) }, run(text), false);
    await expect(drive("first")).rejects.toThrow(/model failed/);
    expect(stored.toolCalls).toEqual([]);
    const afterFailure = JSON.stringify(stored.messages);
    expect(afterFailure).toContain("call_1");
    expect(afterFailure).toContain("exited with code 0");

    failing = false;
    await drive("second");
    // The next turn reads the call in the conversation, before its own human message, once.
    expect(seen.at(-1)!.recovered).toBe(0);
    const texts = stored.messages.map((message) => JSON.stringify(message));
    const callAt = texts.findIndex((text) => text.includes("call_1"));
    const secondAt = texts.findIndex((text) => text.includes('"second"'));
    expect(callAt).toBeGreaterThan(-1);
    expect(callAt).toBeLessThan(secondAt);
  });
});

describe("a turn engine that leaves input.recovered out", () => {
  it("still stores every recovered call: the kit appends the ones its messages lack", async () => {
    let stored: SessionRecord<ModelMessage> = {
      sessionId: "s1",
      lifetime: "lt",
      messages: [],
      running: [],
      applied: [],
      resumes: [],
      pendingResume: null,
      activeRun: null,
    };
    const store = {
      save: async (record: SessionRecord<ModelMessage>) => {
        stored = record;
      },
      load: async () => stored,
      delete: async () => {},
      list: async () => ["s1"],
    };
    let attempt = 0;
    const engine = Object.assign(
      async (input: TurnInput<ModelMessage>) => {
        attempt++;
        if (attempt === 1) {
          await input.tools.journal?.begin("call_1", { cmd: "echo hi" });
          await input.tools.journal?.answered("call_1", { exit_code: 0, output: "hi" });
          throw new Error("provider failed midway");
        }
        // This engine forgets input.recovered.
        return {
          messages: [...input.messages, { role: "user" as const, content: input.userText ?? "" }],
          text: "ok",
        };
      },
      { toolCallFormat: aiSdkToolCallFormat },
    );
    const run = { runId: "r1", resumeId: null, leaseExpiresAt: 0, pendingUserText: "go" };
    await runTurns(
      {
        inbox: {
          claim: async () => ({ claims: [] }),
          ack: async () => ({}),
          getSession: async () => ({ inbox: { claimed: 0 }, waiting_for_bash: null }),
          finishRun: async () => ({}),
        } as never,
        runner: {} as never,
        store,
        resumeSigningSecret: "unused",
        resumeUrl: "unused",
        modelAttempts: 2,
        turn: engine,
      },
      { ...stored, activeRun: run },
      run,
      false,
    );
    expect(attempt).toBe(2);
    expect(aiSdkToolCallFormat.toolCallIds!(stored.messages)).toEqual(["call_1"]);
    expect(JSON.stringify(stored.messages)).toContain("not started again");
    expect(stored.toolCalls).toEqual([]);
  });
});
