// The few JSON-RPC messages the command-path benchmark sends to a session's MCP endpoint, and the
// checks on their answers: a figure is only taken from a call that did what it was asked.

/** The body of one JSON-RPC request. */
export function rpcBody(id: number, method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The `result` of the answer to request `id`; throws on an error, another id or no result. */
export function rpcResult(answer: unknown, id: number): Record<string, unknown> {
  if (!isRecord(answer)) throw new Error(`not a JSON-RPC answer: ${JSON.stringify(answer)}`);
  if (isRecord(answer.error)) {
    throw new Error(`JSON-RPC error ${answer.error.code}: ${answer.error.message}`);
  }
  if (answer.id !== id) throw new Error(`answer to request ${answer.id}, not ${id}`);
  if (!isRecord(answer.result)) throw new Error(`no result in ${JSON.stringify(answer)}`);
  return answer.result;
}

/** The task id of a CreateTaskResult whose command is still working; throws on anything else. */
export function workingTaskId(result: Record<string, unknown>): string {
  const task = result.task;
  if (!isRecord(task) || typeof task.taskId !== "string" || task.status !== "working") {
    throw new Error(`not a working task: ${JSON.stringify(result)}`);
  }
  return task.taskId;
}

/** Throws unless a tool's result says the command succeeded (a CallToolResult without isError). */
export function succeeded(result: Record<string, unknown>): void {
  if (result.isError === true || !Array.isArray(result.content)) {
    throw new Error(`the command's result is not a success: ${JSON.stringify(result)}`);
  }
}
