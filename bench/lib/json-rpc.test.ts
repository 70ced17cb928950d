import { describe, expect, it } from "vitest";
import { rpcBody, rpcResult, succeeded, workingTaskId } from "./json-rpc";

describe("the command-path bench's JSON-RPC checks", () => {
  it("a request body is one JSON-RPC 2.0 message with its id, method and params", () => {
    expect(JSON.parse(rpcBody(7, "tasks/result", { taskId: "t1" }))).toEqual({
      jsonrpc: "2.0",
      id: 7,
      method: "tasks/result",
      params: { taskId: "t1" },
    });
  });

  it("the result of the answer to the request's id is returned", () => {
    expect(rpcResult({ jsonrpc: "2.0", id: 3, result: { ok: 1 } }, 3)).toEqual({ ok: 1 });
  });

  it("an error, an answer to another id, or an answer without a result throws", () => {
    expect(() =>
      rpcResult({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: "Task not found" } }, 3),
    ).toThrow("JSON-RPC error -32602: Task not found");
    expect(() => rpcResult({ jsonrpc: "2.0", id: 4, result: {} }, 3)).toThrow("not 3");
    expect(() => rpcResult({ jsonrpc: "2.0", id: 3 }, 3)).toThrow("no result");
    expect(() => rpcResult([{ jsonrpc: "2.0", id: 3, result: {} }], 3)).toThrow("not a JSON-RPC");
  });

  it("a working task gives its id; a plain tool answer or a finished task throws", () => {
    expect(workingTaskId({ task: { taskId: "t1", status: "working" } })).toBe("t1");
    expect(() =>
      workingTaskId({ content: [{ type: "text", text: "exited with code 0" }] }),
    ).toThrow("not a working task");
    expect(() => workingTaskId({ task: { taskId: "t1", status: "completed" } })).toThrow();
  });

  it("a result marked isError, or one without content, is not a success", () => {
    expect(() => succeeded({ content: [{ type: "text", text: "ok" }] })).not.toThrow();
    expect(() => succeeded({ content: [], isError: true })).toThrow("not a success");
    expect(() => succeeded({ structuredContent: {} })).toThrow("not a success");
  });
});
