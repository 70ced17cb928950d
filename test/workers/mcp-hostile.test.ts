// Bad input and hostile callers at the MCP endpoint: each gets a clear JSON-RPC or problem+json
// error, stores nothing, leaks no runner token or other session's output, and is never a 500.
import { describe, expect, it } from "vitest";
import { call, createSession, uniqueId } from "../support/api";
import { callTool, postMcp, rpc } from "../support/mcp";

const TOKEN = "hostile-runner-token-5e4d";

async function sessionAt(prefix: string, url = "http://runner.test") {
  const sid = uniqueId(prefix);
  await createSession(sid, { runner: { url, token: TOKEN } });
  return sid;
}

const jobsOf = async (sid: string) =>
  (await call("GET", `/v1/sessions/${sid}/exec-jobs`)).body.jobs;

describe("malformed and abusive JSON-RPC", () => {
  it("malformed JSON is a 422 problem naming the position, and stores nothing", async () => {
    const sid = await sessionAt("mcp-malformed");
    const answer = await call("POST", `/v1/sessions/${sid}/mcp`, {
      raw: '{"jsonrpc": "2.0", "id": 1, "method": ',
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe("invalid_request");
    expect(await jobsOf(sid)).toEqual([]);
  });

  it("a batch is refused with -32600 whatever it holds, and none of it runs", async () => {
    const sid = await sessionAt("mcp-batch");
    const one = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "exec_command", arguments: { cmd: "sleep 1" } },
    };
    for (const batch of [[], [one], Array.from({ length: 1000 }, (_, i) => ({ ...one, id: i }))]) {
      const answer = await postMcp(sid, batch);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error.code).toBe(-32600);
    }
    expect(await jobsOf(sid)).toEqual([]);
  });

  it("a message that is not JSON-RPC is refused by the transport as a JSON-RPC error", async () => {
    const sid = await sessionAt("mcp-notrpc");
    const answer = await postMcp(sid, { hello: "world" });
    expect(answer.status).toBe(400);
    expect(answer.body.jsonrpc).toBe("2.0");
    expect(typeof answer.body.error.code).toBe("number");
  });

  it("an id that is an object, a boolean, a fraction or a list, or a jsonrpc other than 2.0, is -32600 and runs nothing", async () => {
    const sid = await sessionAt("mcp-badid");
    const call = {
      method: "tools/call",
      params: { name: "exec_command", arguments: { cmd: "x" } },
    };
    for (const id of [{}, true, 1.5, [1], null]) {
      const answer = await postMcp(sid, { jsonrpc: "2.0", id, ...call });
      expect(answer.status, JSON.stringify(id)).toBe(400);
      expect(answer.body.error.code, JSON.stringify(id)).toBe(-32600);
    }
    const old = await postMcp(sid, { jsonrpc: "1.0", id: 1, ...call });
    expect(old.body.error.code).toBe(-32600);
    expect(await jobsOf(sid)).toEqual([]);
  });

  it("params of the wrong type for initialize, tasks/list, tasks/result and tasks/cancel are -32602 naming the field", async () => {
    const sid = await sessionAt("mcp-badparams");
    for (const [method, params] of [
      ["tasks/list", { cursor: 5 }],
      ["tasks/result", { taskId: ["t"] }],
      ["tasks/cancel", {}],
      ["initialize", { protocolVersion: 2025, capabilities: {}, clientInfo: {} }],
    ] as const) {
      const answer = await rpc(sid, method, params);
      expect(answer.body.error.code, method).toBe(-32602);
      expect(answer.body.error.message, method).toMatch(/^Invalid params: params\./);
    }
  });

  it("an unknown method is -32601 and an unknown tool is -32602", async () => {
    const sid = await sessionAt("mcp-unknown");
    const method = await rpc(sid, "resources/subscribe-everything");
    expect(method.status).toBe(200);
    expect(method.body.error.code).toBe(-32601);
    const tool = await rpc(sid, "tools/call", { name: "rm_rf", arguments: {} });
    expect(tool.body.error.code).toBe(-32602);
  });

  it("arguments off the schema are a tool error naming them, and the runner is never asked", async () => {
    const sid = await sessionAt("mcp-badargs");
    for (const args of [
      {},
      { cmd: "" },
      { cmd: "x".repeat(9000) },
      { cmd: "ls", yield_time_ms: 10 },
      { cmd: "ls", extra: true },
    ]) {
      const result = await callTool(sid, "exec_command", args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(result.content[0].text).toMatch(/^Invalid arguments: /);
    }
    expect(await jobsOf(sid)).toEqual([]);
    const poll = await callTool(sid, "write_stdin", { session_id: "../etc" });
    expect(poll.isError).toBe(true);
  });
});

describe("a hostile runner", () => {
  it.each([
    ["huge", "the runner's answer was too large to read"],
    ["garbage", "the runner's answer could not be read"],
    ["shape", "the runner's answer could not be read"],
    ["down", "the runner's answer could not be read"],
  ])(
    "a runner answering %s gives a tool error, stores no job and shows no token",
    async (mode, said) => {
      const sid = await sessionAt(`mcp-${mode}`, `http://runner.test/hostile/${mode}`);
      const answer = await rpc(sid, "tools/call", {
        name: "exec_command",
        arguments: { cmd: "ls" },
      });
      expect(answer.status).toBe(200);
      expect(answer.body.result.isError).toBe(true);
      expect(answer.body.result.content[0].text).toContain(said);
      expect(JSON.stringify(answer.body)).not.toContain(TOKEN);
      expect(await jobsOf(sid)).toEqual([]);
    },
  );

  it("a runner that never answers is given up after the yield and a margin, as a tool error", async () => {
    const sid = await sessionAt("mcp-never", "http://runner.test/hostile/never");
    const result = await callTool(sid, "exec_command", { cmd: "ls", yield_time_ms: 250 });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toContain("the runner did not answer in time");
    // The command was sent: it may run, and the model is told not to start it again blindly.
    expect(result.content[0].text).toContain("The command may be running");
    expect(result.content[0].text).toContain("Do not run it again blindly");
    expect(await jobsOf(sid)).toEqual([]);
  });
});
